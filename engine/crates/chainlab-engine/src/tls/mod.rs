//! TLS 1.3 over the project's OpenSSL: context setup shared by both sides, the server and
//! the measuring client.

pub mod client;
pub mod server;
