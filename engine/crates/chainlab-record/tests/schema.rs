//! `records.schema.json` (the machine-readable record contract every engine is checked
//! against, Rust or not) against the types that write the records.
//!
//! Each record type is built twice, as struct literals naming every field: once with every
//! optional field set, once with none. A field added to a type without the schema then fails
//! to compile here (the literal misses it) or fails below (the schema misses it); a field
//! added to the schema without the type fails too. The full record's keys must be the
//! schema's properties, the bare record's keys its required list, and both must have the
//! types the schema declares.

use std::collections::BTreeSet;

use chainlab_record::contract::{definition as def, problems, SCHEMA_JSON};
use chainlab_record::primitives::{Sample, EVENT};
use chainlab_record::record::{
    ClientRecord, Datagrams, ErrorCategory, GeneratorRecord, MtcChecked, ObservedCert, Outcome,
    ServerModel, ServerRecord, ServerRecorded, ServerThreadRecord, Transport, TrustAnchorsSeen,
    SCHEMA,
};
use serde_json::{Map, Value};

#[test]
fn the_schema_names_this_crates_schema_id() {
    let schema = schema();
    assert_eq!(schema["$id"], SCHEMA);
    assert_eq!(def("ready")["properties"]["record_schema"]["const"], SCHEMA);
}

#[test]
fn client_records_match_the_schema() {
    check("client", &full_client(), &bare_client());
}

#[test]
fn server_records_match_the_schema() {
    check("server", &full_server(), &bare_server());
}

#[test]
fn generator_records_match_the_schema() {
    let generator = GeneratorRecord {
        schema: SCHEMA,
        side: "generator",
        rate: 50.0,
        arrivals: "poisson",
        duration_ns: 1_000_000,
        max_in_flight: 64,
        cpus: Some(vec![1]),
        scheduled: 50,
        started: 49,
        saturated: 1,
        wall_ns: 1_100_000,
        process_cpu_ns: 200_000,
        scheduler_cpu_ns: 10_000,
        max_dispatch_lag_ns: 3_000,
    };
    check("generator", &generator, &generator);
}

#[test]
fn server_thread_records_match_the_schema() {
    let thread = ServerThreadRecord {
        schema: SCHEMA,
        side: "server_thread",
        stack: "rustls",
        server_model: ServerModel::Event,
        thread: 0,
        cpu: Some(0),
        connections: 3,
        wall_ns: 5_000_000,
        cpu_ns: 4_000_000,
        conn_cpu_ns: 3_900_000,
        wait_cpu_ns: 100_000,
    };
    check("server_thread", &thread, &thread);
}

#[test]
fn primitive_records_match_the_schema() {
    let sample = |message_bytes| Sample {
        event: EVENT,
        subject: "ML-DSA-44",
        op: "sign",
        message_bytes,
        warmup: false,
        seq: 3,
        wall_ns: 600_000,
        cpu_ns: 590_000,
    };
    check("primitive", &sample(Some(130)), &sample(None));
    let line = serde_json::to_value(sample(None)).expect("JSON");
    assert_eq!(chainlab_record::contract::kind_of(&line), Some("primitive"));
    assert!(chainlab_record::contract::violations(&line).is_empty());
}

#[test]
fn the_schema_refuses_a_missing_an_extra_and_a_mistyped_field() {
    let def = def("client");
    let good = to_object(&bare_client());
    assert!(problems(&def, &good).is_empty());
    let mut missing = good.clone();
    missing.remove("group");
    assert!(!problems(&def, &missing).is_empty());
    let mut extra = good.clone();
    extra.insert("colour".into(), Value::from("blue"));
    assert!(!problems(&def, &extra).is_empty());
    let mut mistyped = good;
    mistyped.insert("seq".into(), Value::from("7"));
    assert!(!problems(&def, &mistyped).is_empty());
}

fn check<T: serde::Serialize>(kind: &str, full: &T, bare: &T) {
    let def = def(kind);
    let full = to_object(full);
    let bare = to_object(bare);
    let properties: BTreeSet<&str> = def["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    let required: BTreeSet<&str> = def["required"]
        .as_array()
        .expect("required")
        .iter()
        .map(|v| v.as_str().expect("a name"))
        .collect();
    let written: BTreeSet<&str> = full.keys().map(String::as_str).collect();
    let always: BTreeSet<&str> = bare.keys().map(String::as_str).collect();
    assert_eq!(
        written, properties,
        "{kind}: the type's fields (left) against the schema's properties (right)"
    );
    assert_eq!(
        always, required,
        "{kind}: the fields always written (left) against the schema's required (right)"
    );
    for record in [&full, &bare] {
        let found = problems(&def, record);
        assert!(found.is_empty(), "{kind}: {found:?}");
    }
}

fn schema() -> Value {
    serde_json::from_str(SCHEMA_JSON).expect("records.schema.json is JSON")
}

fn to_object<T: serde::Serialize>(record: &T) -> Map<String, Value> {
    match serde_json::to_value(record).expect("serializable") {
        Value::Object(o) => o,
        other => panic!("a record is an object, not {other}"),
    }
}

fn cert() -> ObservedCert {
    ObservedCert {
        der_bytes: 1000,
        subject: "O=chainlab, CN=chainlab leaf (ML-DSA-44)".into(),
        sig_alg: "ML-DSA-44".into(),
        key_alg: "ML-DSA-44".into(),
    }
}

fn datagrams(flight: Option<u64>) -> Datagrams {
    Datagrams {
        datagrams_read: 3,
        datagrams_written: 2,
        conn_datagrams_read: 4,
        conn_datagrams_written: 3,
        flight_datagrams: flight,
    }
}

fn full_client() -> ClientRecord {
    ClientRecord {
        schema: SCHEMA,
        side: "client",
        stack: "openssl-3.5",
        transport: Transport::Quic,
        seq: 1,
        warmup: false,
        conn_id: Some("0011223344556677".into()),
        local_port: Some(40000),
        start_unix_ns: 1_700_000_000_000_000_000,
        connect_ns: Some(10),
        handshake_ns: Some(20),
        total_ns: Some(30),
        cpu_ns: Some(25),
        cpu_user_us: Some(1),
        cpu_sys_us: Some(0),
        instructions: Some(1_000_000),
        bytes_read: Some(5000),
        bytes_written: Some(1500),
        conn_bytes_read: Some(5100),
        conn_bytes_written: Some(1524),
        datagrams: Some(datagrams(Some(1))),
        peer_close_notify: Some(true),
        group: Some("X25519MLKEM768".into()),
        sigalg: Some("mldsa44".into()),
        resumed: Some(false),
        resume_offered: Some(false),
        verify: true,
        peer_chain: Some(vec![cert()]),
        mtc: Some(MtcChecked {
            mtc_kind: "landmark",
            mtc_proof_hashes: 4,
            mtc_signatures_checked: 0,
            mtc_landmark: Some(3),
        }),
        first_conn_id: Some("8899aabbccddeeff".into()),
        retry_first_detail: Some("MTC landmark check failed".into()),
        trust_anchors: Some(TrustAnchorsSeen {
            trust_anchors_requested: 1,
            trust_anchor_matched: true,
            trust_anchors_available: 2,
        }),
        client_kind: Some("modern".into()),
        outcome: Outcome::Ok,
        error_category: None,
        error_detail: None,
        intended_ns: Some(1_000),
        sched_lag_ns: Some(10),
        latency_ns: Some(40),
    }
}

fn bare_client() -> ClientRecord {
    ClientRecord {
        schema: SCHEMA,
        side: "client",
        stack: "rustls",
        transport: Transport::Tcp,
        seq: 0,
        warmup: true,
        conn_id: None,
        local_port: None,
        start_unix_ns: 1_700_000_000_000_000_000,
        connect_ns: Some(10),
        handshake_ns: None,
        total_ns: Some(10),
        cpu_ns: None,
        cpu_user_us: None,
        cpu_sys_us: None,
        instructions: None,
        bytes_read: None,
        bytes_written: None,
        conn_bytes_read: None,
        conn_bytes_written: None,
        datagrams: None,
        peer_close_notify: None,
        group: None,
        sigalg: None,
        resumed: None,
        resume_offered: None,
        verify: true,
        peer_chain: None,
        mtc: None,
        first_conn_id: None,
        retry_first_detail: None,
        trust_anchors: None,
        client_kind: None,
        outcome: Outcome::Failed,
        error_category: Some(ErrorCategory::ConnectRefused),
        error_detail: Some("connection refused".into()),
        intended_ns: None,
        sched_lag_ns: None,
        latency_ns: None,
    }
}

fn full_server() -> ServerRecord {
    ServerRecord {
        schema: SCHEMA,
        side: "server",
        stack: "boringssl",
        transport: Transport::Quic,
        server_model: ServerModel::Threads,
        seq: 0,
        conn_id: Some("0011223344556677".into()),
        peer_port: Some(40000),
        accept_unix_ns: 1_700_000_000_000_000_000,
        handshake_ns: Some(20),
        cpu_ns: Some(15),
        cpu_user_us: Some(1),
        cpu_sys_us: Some(0),
        instructions: Some(1_000_000),
        conn_ns: Some(40),
        conn_cpu_ns: Some(20),
        bytes_read: Some(1500),
        bytes_written: Some(5000),
        conn_bytes_read: Some(1524),
        conn_bytes_written: Some(5024),
        datagrams: Some(datagrams(None)),
        peer_close_notify: Some(true),
        group: Some("X25519MLKEM768".into()),
        sigalg: Some("mldsa44".into()),
        resumed: Some(false),
        recorded: ServerRecorded::default()
            .chain_index(Some(Some(1)))
            .peer_chain(Some(Some(vec![cert()]))),
        outcome: Outcome::Ok,
        error_category: None,
        error_detail: None,
    }
}

fn bare_server() -> ServerRecord {
    ServerRecord {
        schema: SCHEMA,
        side: "server",
        stack: "go",
        transport: Transport::Tcp,
        server_model: ServerModel::Event,
        seq: 0,
        conn_id: None,
        peer_port: None,
        accept_unix_ns: 1_700_000_000_000_000_000,
        handshake_ns: None,
        cpu_ns: None,
        cpu_user_us: None,
        cpu_sys_us: None,
        instructions: None,
        conn_ns: None,
        conn_cpu_ns: None,
        bytes_read: None,
        bytes_written: None,
        conn_bytes_read: None,
        conn_bytes_written: None,
        datagrams: None,
        peer_close_notify: None,
        group: None,
        sigalg: None,
        resumed: None,
        recorded: ServerRecorded::default(),
        outcome: Outcome::Failed,
        error_category: Some(ErrorCategory::PeerClosed),
        error_detail: Some("eof".into()),
    }
}
