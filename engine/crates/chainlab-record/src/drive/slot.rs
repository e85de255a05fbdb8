//! What a stack gives the client loops: a connection slot.

use crate::record::ClientRecord;

/// A connection slot: attempts run one after another on the calling thread.
pub trait Slot {
    /// One connection, start to finish. Errors only for local failures; everything the
    /// network or the peer does ends up in the record.
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord>;
}

/// A boxed slot is a slot (the kinds of a population, each its stack's own type).
impl<T: Slot + ?Sized> Slot for Box<T> {
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        (**self).attempt(seq, warmup)
    }
}
