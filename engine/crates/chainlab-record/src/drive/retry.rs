//! The draft's trust-anchor retry as `--mtc-retry` runs it, over any stack's `Slot`.

use anyhow::bail;

use super::slot::{Attempted, Slot};
use crate::record::ClientRecord;

/// The draft's trust-anchor retry (draft-ietf-tls-trust-anchor-ids, section 4.3) as
/// `--mtc-retry` runs it: `first` connects as configured; when its certificate fails the
/// MTC landmark check, `retry` (the same client asking for the standalone certificate)
/// connects at once, and the attempt's record is the two together, as the user sees them:
/// the latency of a client that retries as soon as the check fails (the first connection's
/// connect and handshake to its failure, then the second's; the failed connection's
/// teardown, which such a client does not wait for, is left out), both connections' CPU and
/// bytes, the second's outcome, negotiation and certificate.
pub struct MtcRetry<S> {
    pub first: S,
    pub retry: S,
}

impl<S: Slot> Slot for MtcRetry<S> {
    fn attempt(&mut self, seq: u64, warmup: bool) -> anyhow::Result<ClientRecord> {
        let first = self.first.attempt(seq, warmup)?;
        Ok(self.retried(first, seq, warmup, false)?.finish())
    }

    /// A first connection that succeeded leaves its close for later; one that failed the
    /// landmark check is retried at once, and the retry leaves its close for later.
    fn attempt_deferring_close(&mut self, seq: u64, warmup: bool) -> anyhow::Result<Attempted> {
        let first = self.first.attempt_deferring_close(seq, warmup)?;
        first.then_done(|first| self.retried(first, seq, warmup, true))
    }
}

impl<S: Slot> MtcRetry<S> {
    /// `first`, or where it failed the landmark check, `first` and the retry as one record
    /// (the retry's close left for later where `defer`).
    fn retried(
        &mut self,
        first: ClientRecord,
        seq: u64,
        warmup: bool,
        defer: bool,
    ) -> anyhow::Result<Attempted> {
        if !missing_landmark(&first) {
            return Ok(Attempted::Done(first));
        }
        let second = if defer {
            self.retry.attempt_deferring_close(seq, warmup)?
        } else {
            Attempted::Done(self.retry.attempt(seq, warmup)?)
        };
        Ok(second.after(first))
    }
}

/// Whether an attempt's certificate failed the MTC landmark check (`MtcRetry` retries it).
fn missing_landmark(record: &ClientRecord) -> bool {
    let landmark = chainlab_mtc::verify::failure_prefix(chainlab_mtc::verify::LANDMARK_CHECK);
    record
        .error_detail
        .as_deref()
        .is_some_and(|d| d.contains(&landmark))
}

/// The retry connection's arguments: the same client, its SNI marking the retry
/// (`args::MTC_RETRY_SNI_PREFIX`). The name the certificate is checked against stays
/// `--servername` (the MTC verifier holds it), so only the ClientHello changes.
pub fn mtc_retry_args(args: &crate::args::ClientArgs) -> anyhow::Result<crate::args::ClientArgs> {
    if args.servername.parse::<std::net::IpAddr>().is_ok() {
        bail!(
            "--mtc-retry with --servername {}: the retry is marked in the SNI, which an IP \
             address does not carry; allowed: a DNS name (e.g. localhost)",
            args.servername
        );
    }
    if args.tls.transport != crate::record::Transport::Tcp {
        bail!("--mtc-retry: TCP only (the QUIC server does not switch certificates by SNI)");
    }
    let mut retry = args.clone();
    retry.servername = format!("{}{}", crate::args::MTC_RETRY_SNI_PREFIX, args.servername);
    Ok(retry)
}
