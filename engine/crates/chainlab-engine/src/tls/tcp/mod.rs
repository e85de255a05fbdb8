//! TLS 1.3 over TCP: the client's attempt (`client`) and the server (`server`).

pub mod client;
pub mod server;
