//! What a stack gives the client loops: a connection slot.

use crate::observed::{ClientIdentity, ClientObserved};
use crate::record::ClientRecord;

/// A connection slot: attempts run one after another on the calling thread.
pub trait Slot {
    /// One connection, start to finish. Errors only for local failures; everything the
    /// network or the peer does ends up in the record.
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord>;

    /// One connection up to its handshake's end and this side's close_notify; the peer's
    /// close_notify (and the session tickets before it) is left in the socket, read when the
    /// loop finishes the attempt (`Attempted::Closing`), after the next attempt's timed span
    /// (`handshake --defer-close`). On a path with delay this saves each attempt the round
    /// trip the close waits for. A slot whose next attempt needs what the close brings (a
    /// ticket to resume with, a client certificate's verdict) or that cannot leave its close
    /// for later closes at once: this default.
    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        self.attempt(seq, warmup).map(Attempted::Done)
    }
}

/// An attempt as `Slot::attempt_deferring_close` leaves it: its record, or its connection
/// still closing and what makes the record once the close is read.
// A record moves once per attempt, after its timed span: not worth a box of its own.
#[allow(clippy::large_enum_variant)]
pub enum Attempted {
    Done(ClientRecord),
    Closing(Closing),
    /// A connection that failed on this side (its alert sent, our FIN too), its record made,
    /// the rest of what the server sent still unread: read after the next attempt's timed
    /// span (`handshake --defer-close`), the bytes it brings added to the record's. A retry
    /// (`drive::MtcRetry`, a trust-anchor retry) starts at once, as the client it stands for
    /// does, and no longer waits a round trip for the failed connection's end first.
    Draining(ClientRecord, Drain),
}

/// Reads a connection's close to its end (the peer's close_notify, bounded by the read
/// timeout) and makes the attempt's record. Owns the connection; nothing of it is timed.
pub type Closing = Box<dyn FnOnce() -> ClientRecord>;

/// Reads a failed connection to its end (the server's close, bounded by the read timeout),
/// then frees it; the bytes read. Nothing of it is timed.
pub type Drain = Box<dyn FnOnce() -> u64>;

/// The `Drain` of connection `conn`: `drain` reads it to its end, and the bytes it read are
/// what `read` counts after it less before it.
pub fn drain_later<C: 'static>(mut conn: C, read: fn(&C) -> u64, drain: fn(&mut C)) -> Drain {
    Box::new(move || {
        let before = read(&conn);
        drain(&mut conn);
        read(&conn) - before
    })
}

/// A close left for later, as an engine's attempt keeps it until the record is made: reads
/// the close to its end and notes what it gives the record (whether the peer's close_notify
/// came, the whole connection's bytes).
pub type ReadClose = Box<dyn FnOnce(&mut ClientObserved)>;

impl Attempted {
    /// An engine's attempt as `seen` makes it: its record now, or where the close was left
    /// for later (`later`), once that reading has noted what the close gives.
    pub fn observed(
        who: ClientIdentity,
        seq: u64,
        warmup: bool,
        start_unix_ns: u128,
        mut seen: ClientObserved,
        later: Option<ReadClose>,
    ) -> Attempted {
        let record = move |seen| ClientRecord::observed(who, seq, warmup, start_unix_ns, seen);
        match later {
            None => Attempted::Done(record(seen)),
            Some(read) => Attempted::Closing(Box::new(move || {
                read(&mut seen);
                record(seen)
            })),
        }
    }

    /// A failed attempt made now whose connection is read to its end later (`drain`, where
    /// the engine left it for later); any other stays as it is.
    pub fn draining(self, drain: Option<Drain>) -> Attempted {
        match drain {
            Some(drain) => self.with_drain(drain),
            None => self,
        }
    }

    /// This attempt with a failed connection's drain still to run once it is finished: a
    /// record made now stays one (a failure a retry may still follow), one still closing
    /// runs the drain after its close.
    fn with_drain(self, drain: Drain) -> Attempted {
        match self {
            Attempted::Done(record) => Attempted::Draining(record, drain),
            Attempted::Draining(record, first) => {
                Attempted::Draining(record, Box::new(move || first() + drain()))
            }
            Attempted::Closing(close) => Attempted::Closing(Box::new(move || {
                let mut record = close();
                drained(&mut record, drain());
                record
            })),
        }
    }

    /// An attempt whose record is made: through `then` (a retry that may follow its
    /// failure), a failed connection's drain left until that is finished; one still closing
    /// succeeded and stays as it is.
    pub fn then_done(
        self,
        then: impl FnOnce(ClientRecord) -> anyhow::Result<Attempted>,
    ) -> anyhow::Result<Attempted> {
        match self {
            Attempted::Done(record) => then(record),
            Attempted::Draining(record, drain) => Ok(then(record)?.with_drain(drain)),
            closing => Ok(closing),
        }
    }

    /// This attempt as the retry of `first` (a connection that failed and was retried at
    /// once): the two as one record (`drive::merged`), made once this one's is, its close
    /// read where this one left it for later.
    pub fn after(self, first: ClientRecord) -> Attempted {
        match self {
            Attempted::Done(second) => Attempted::Done(merged(first, second)),
            Attempted::Closing(close) => {
                Attempted::Closing(Box::new(move || merged(first, close())))
            }
            Attempted::Draining(second, drain) => Attempted::Draining(merged(first, second), drain),
        }
    }

    /// The record, reading the close or the failed connection's rest first where it was left
    /// for later.
    pub fn finish(self) -> ClientRecord {
        match self {
            Attempted::Done(record) => record,
            Attempted::Closing(close) => close(),
            Attempted::Draining(mut record, drain) => {
                drained(&mut record, drain());
                record
            }
        }
    }

    /// The record, with `edit` applied once it is made (a population's kind).
    pub fn map(self, edit: impl FnOnce(&mut ClientRecord) + 'static) -> Attempted {
        match self {
            Attempted::Done(mut record) => {
                edit(&mut record);
                Attempted::Done(record)
            }
            Attempted::Closing(close) => Attempted::Closing(Box::new(move || {
                let mut record = close();
                edit(&mut record);
                record
            })),
            Attempted::Draining(mut record, drain) => {
                edit(&mut record);
                Attempted::Draining(record, drain)
            }
        }
    }
}

/// A failed connection's record with the bytes its drain read added to the connection's
/// (only where the record counts bytes).
fn drained(record: &mut ClientRecord, read: u64) {
    if let Some(bytes) = record.conn_bytes_read.as_mut() {
        *bytes += read;
    }
}

/// A boxed slot is a slot (the kinds of a population, each its stack's own type).
impl<T: Slot + ?Sized> Slot for Box<T> {
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        (**self).attempt(seq, warmup)
    }

    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        (**self).attempt_deferring_close(seq, warmup)
    }
}

/// Two connections' records as one attempt (see `drive::MtcRetry`; the OpenSSL and BoringSSL engines'
/// trust-anchor retries too).
pub fn merged(first: ClientRecord, second: ClientRecord) -> ClientRecord {
    let sum = |a: Option<u64>, b: Option<u64>| a.zip(b).map(|(a, b)| a + b);
    let total = sum(first.total_ns, second.total_ns);
    ClientRecord {
        connect_ns: first.connect_ns,
        handshake_ns: total
            .zip(first.connect_ns)
            .map(|(t, c)| t.saturating_sub(c)),
        total_ns: total,
        cpu_ns: sum(first.cpu_ns, second.cpu_ns),
        cpu_user_us: sum(first.cpu_user_us, second.cpu_user_us),
        cpu_sys_us: sum(first.cpu_sys_us, second.cpu_sys_us),
        instructions: sum(first.instructions, second.instructions),
        bytes_read: sum(first.bytes_read, second.bytes_read),
        bytes_written: sum(first.bytes_written, second.bytes_written),
        conn_bytes_read: sum(first.conn_bytes_read, second.conn_bytes_read),
        conn_bytes_written: sum(first.conn_bytes_written, second.conn_bytes_written),
        start_unix_ns: first.start_unix_ns,
        first_conn_id: first.conn_id,
        retry_first_detail: first.error_detail,
        ..second
    }
}
