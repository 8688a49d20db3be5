pub mod decide_status;
pub mod price_order;
