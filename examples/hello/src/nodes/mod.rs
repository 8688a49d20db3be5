pub mod greet;
