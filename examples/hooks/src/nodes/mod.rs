pub mod key_status;
pub mod sample_event;
pub mod sign;
pub mod verify;
