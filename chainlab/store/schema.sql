-- chainlab result store, schema version 16 (chainlab/store/schema.py: SCHEMA_VERSION, which
-- tests/store/test_schema.py holds this line to; the versions' history is schema.py's).
-- Every column is declared here once, except one per lever axis of `scenarios`, which its
-- axis declares (chainlab/campaign/axes.py). An older store is upgraded when opened for
-- writing (chainlab/store/schema.py: UPGRADES, which adds columns as declared here) to
-- exactly these columns and types. Rows are inserted by column name.
-- One DuckDB file per campaign run. Units: *_ns nanoseconds, *_us microseconds, bytes.
-- Nothing here holds a path of the machine that made it.

CREATE TABLE meta (
    key   VARCHAR PRIMARY KEY,      -- 'schema_version', 'created_by'
    value VARCHAR NOT NULL
);

-- One row per `chainlab run` invocation (a --resume adds a row; scenarios keep their run_id).
CREATE TABLE runs (
    run_id              VARCHAR PRIMARY KEY,  -- uuid4 hex
    started_at          TIMESTAMP NOT NULL,   -- UTC
    ended_at            TIMESTAMP,            -- NULL while running or if killed
    status              VARCHAR NOT NULL,     -- running | completed | interrupted | failed
    campaign_file_name  VARCHAR NOT NULL,     -- base name only, never a path
    campaign_file_sha256 VARCHAR NOT NULL,
    campaign_toml       VARCHAR NOT NULL,     -- the file's full text
    chainlab_version    VARCHAR NOT NULL,
    chainlab_commit     VARCHAR,              -- git commit (+ '-dirty'), NULL outside git
    engine_info         JSON NOT NULL,        -- `chainlab-engine info` output
    openssl_version     VARCHAR NOT NULL,     -- e.g. '3.5.5'
    openssl_patch_sha   VARCHAR NOT NULL,     -- hash of the applied patch set
    machine             JSON NOT NULL,        -- cpu_model, cores, memory_bytes, kernel, governor, os
    options             JSON NOT NULL,        -- command-line options of the run (seed, order, ...)
    libraries           JSON,                 -- Python, numpy, scipy, pandas, duckdb, ... versions
                                              -- of the run (NULL in runs of version-1 stores)
    estimate            JSON                  -- the run-time estimate it started with and what
                                              -- it had to make (chainlab.model.run_estimate;
                                              -- NULL before version 14)
);

-- The deduplicated scenario space: one row per scenario_id, whatever campaigns share it.
CREATE TABLE scenarios (
    scenario_id     VARCHAR PRIMARY KEY,     -- e.g. x25519mlkem768__slh_root__ml_int__ml_leaf
    kex             VARCHAR NOT NULL,        -- OpenSSL group name, e.g. X25519MLKEM768
    kex_family      VARCHAR NOT NULL,        -- classical | hybrid | pure_pq
    depth           INTEGER NOT NULL,        -- 1..4 (0: a target, whose chain is its own)
    root_alg        VARCHAR,                 -- NULL at depth 1
    int1_alg        VARCHAR,                 -- first intermediate below the root (depth >= 3)
    int2_alg        VARCHAR,                 -- second intermediate (depth 4)
    leaf_alg        VARCHAR,                 -- NULL only for a target
    network         VARCHAR NOT NULL,        -- network profile name ('loopback')
    params          JSON NOT NULL,           -- everything above plus anything else, as declared
    -- a server chainlab did not start: the [targets.<name>] name (address, servername, CA
    -- in params); NULL for the lab's own servers
    target          VARCHAR
    -- ... and one column per lever axis, declared with the axis (chainlab/campaign/axes.py:
    -- `Axis.columns`) and added by chainlab/store/schema.py (`axis_columns_sql`), each
    -- VARCHAR NOT NULL with the axis's default (a store made before an axis existed gets
    -- the column, at that default, when it is next opened for writing).
);

CREATE TABLE campaign_scenarios (
    campaign    VARCHAR NOT NULL,            -- e.g. 'A'
    scenario_id VARCHAR NOT NULL,
    PRIMARY KEY (campaign, scenario_id)
);

-- One row per scenario executed (written in the same transaction as its samples).
CREATE TABLE scenario_runs (
    run_id          VARCHAR NOT NULL,
    scenario_id     VARCHAR NOT NULL,
    status          VARCHAR NOT NULL,        -- completed | failed
    started_at      TIMESTAMP NOT NULL,
    ended_at        TIMESTAMP NOT NULL,
    n_measured      INTEGER NOT NULL,        -- non-warm-up handshakes attempted
    n_ok            INTEGER NOT NULL,
    n_failed        INTEGER NOT NULL,
    n_warmup        INTEGER NOT NULL,
    stop_reason     VARCHAR NOT NULL,        -- fixed_count | ci_target | max_count | time_cap | failed
    ci_rel_halfwidth DOUBLE,                 -- achieved 95 % CI half-width / mean (total_ns)
    failure_cause   VARCHAR,                 -- dominant error_category when status = failed
    pki_sha256      VARCHAR NOT NULL,        -- hash over the served chain file
    served_chain_der_bytes INTEGER NOT NULL, -- DER bytes of the certificates the server sends
    served_chain_len INTEGER NOT NULL,
    engine_seconds  DOUBLE NOT NULL,         -- wall time inside engine handshake loops
    server_exit     VARCHAR,                 -- how the server process ended: 'sigterm', 'crashed: ...'; 'kept': alive, kept for later visits (chainlab.runner.servers)
    -- added by the runner (campaign issue); readers may ignore them:
    sampling        JSON,                    -- the scenario's resolved sampling policy
    batches         INTEGER,                 -- client processes run (each a batch of handshakes)
    wall_seconds    DOUBLE,                  -- the scenario's wall time (PKI, processes, sampling)
    failure_detail  VARCHAR,                 -- a human-readable account when status = failed
    -- emulated links only (NULL on loopback and in version-1 stores): the forwarder's own
    -- timing error while it carried this scenario, and the queueing its bottleneck added
    link_timer_late_us_mean DOUBLE,
    link_timer_late_us_max  DOUBLE,
    link_queue_wait_us_max  DOUBLE,
    link_flagged    BOOLEAN,                 -- the timer's lateness exceeded the profile's tolerance
    -- certificate compression as the server's ready line reported it (NULL: none, or a store
    -- before version 3): the Certificate message body before and after compression, and
    -- whether the compressed form was installed (a chain that does not shrink is not)
    cert_message_bytes      INTEGER,
    cert_compressed_bytes   INTEGER,
    cert_compression_installed BOOLEAN,
    -- where the scenario ran (NULL before version 4): the executor (local | dask), the
    -- worker's address, the host's name, CPU model, cores, kernel, architecture and engine
    -- build; a split scenario's {placement, server, client}
    host            JSON,
    -- the server's CPU while it served (NULL when chainlab did not start it or could not read
    -- it, and before version 12), ns, summed over its visits: its process's (threads' run
    -- time, ready line to stop), of it the connections' (conn_cpu_ns of every record it
    -- wrote), and its serving threads' accounts (NULL for a server that writes none): their
    -- CPU, of it waiting for connections (chainlab/runner/server_cpu.py)
    server_process_cpu_ns BIGINT,
    server_conn_cpu_ns    BIGINT,
    server_threads_cpu_ns BIGINT,
    server_wait_cpu_ns    BIGINT,
    PRIMARY KEY (run_id, scenario_id)
);

-- Certificates of each scenario's hierarchy, as generated (position 0 = leaf).
CREATE TABLE certificates (
    scenario_id VARCHAR NOT NULL,
    position    INTEGER NOT NULL,            -- 0 leaf, 1 first issuer above it, ...
    role        VARCHAR NOT NULL,            -- leaf | int1 | int2 | root | self-signed
    algorithm   VARCHAR NOT NULL,
    der_bytes   INTEGER NOT NULL,
    sha256      VARCHAR NOT NULL,
    served      BOOLEAN NOT NULL,            -- sent under the scenario's served_chain policy
    PRIMARY KEY (scenario_id, position)
);

-- One row per handshake: the client record paired with the server record of the same
-- connection (conn_id = first 8 bytes of the ClientHello random). server_* are NULL when
-- the server never saw the connection.
CREATE TABLE samples (
    run_id          VARCHAR NOT NULL,
    scenario_id     VARCHAR NOT NULL,
    seq             BIGINT NOT NULL,
    warmup          BOOLEAN NOT NULL,
    conn_id         VARCHAR,
    start_unix_ns   HUGEINT NOT NULL,
    outcome         VARCHAR NOT NULL,        -- ok | failed
    error_category  VARCHAR,
    error_detail    VARCHAR,
    connect_ns      BIGINT,
    handshake_ns    BIGINT,
    total_ns        BIGINT,                  -- the latency: connect + TLS handshake
    client_cpu_ns   BIGINT,
    client_cpu_user_us BIGINT,
    client_cpu_sys_us  BIGINT,
    bytes_read      BIGINT,                  -- client side, to end of handshake
    bytes_written   BIGINT,
    conn_bytes_read BIGINT,                  -- client side, whole connection
    conn_bytes_written BIGINT,
    grp             VARCHAR,                 -- negotiated group
    sigalg          VARCHAR,                 -- negotiated signature scheme
    resumed         BOOLEAN,
    verify          BOOLEAN NOT NULL,
    chain_len       INTEGER,                 -- observed peer chain
    chain_der_bytes BIGINT,
    server_handshake_ns BIGINT,
    server_cpu_ns   BIGINT,
    server_cpu_user_us BIGINT,
    server_cpu_sys_us  BIGINT,
    server_bytes_read  BIGINT,
    server_bytes_written BIGINT,
    server_outcome  VARCHAR,
    server_error_category VARCHAR,
    server_conn_ns  BIGINT,                  -- the server's whole connection: accept to close
    server_conn_cpu_ns BIGINT,               -- its CPU over that (NULL in version-1 stores)
    client_instructions BIGINT,              -- user-mode instructions over client_cpu_ns's span
    server_instructions BIGINT,              -- and server_cpu_ns's (NULL: no hardware counter
                                             -- on the host, or a store older than version 3)
    -- QUIC only (NULL over TCP and before version 5): UDP datagrams the client read and
    -- wrote over the handshake span and the connection, and the datagrams it had sent
    -- when the server's flight was complete (bytes_* then count UDP payload bytes)
    datagrams_read  BIGINT,
    datagrams_written BIGINT,
    conn_datagrams_read BIGINT,
    conn_datagrams_written BIGINT,
    flight_datagrams BIGINT,
    -- Merkle Tree Certificates only (NULL for X.509 and before version 7): how the client
    -- accepted the MTC (landmark | standalone), its proof's hashes, the subtree signatures
    -- it verified
    mtc_kind        VARCHAR,
    mtc_proof_hashes INTEGER,
    mtc_signatures_checked INTEGER,
    -- Staged rollout only (NULL otherwise and before version 8): the kind of client the
    -- attempt drew from the scenario's population, and the chain a dual-chain server sent
    -- (0: the hierarchy's, 1: the second chain's)
    client_kind     VARCHAR,
    chain_index     INTEGER,
    -- Whether the attempt connected twice (the MTC trust-anchor retry: the record is both
    -- connections); NULL before version 11
    retried         BOOLEAN,
    -- Landmark lag only (NULL otherwise and before version 15): the landmark a
    -- landmark-relative MTC was verified against
    mtc_landmark    INTEGER,
    -- Then the columns the axes record (chainlab/axes: `Axis.recorded`, added by
    -- chainlab/store/schema.py `recorded_columns_sql`, NULL in rows from before).
    PRIMARY KEY (run_id, scenario_id, seq)
);

-- The observed peer chain, once per scenario run (from the first successful handshake).
CREATE TABLE observed_chain (
    run_id      VARCHAR NOT NULL,
    scenario_id VARCHAR NOT NULL,
    position    INTEGER NOT NULL,            -- 0 = leaf, as sent
    der_bytes   INTEGER NOT NULL,
    subject     VARCHAR NOT NULL,
    sig_alg     VARCHAR NOT NULL,
    key_alg     VARCHAR NOT NULL,
    PRIMARY KEY (run_id, scenario_id, position)
);

-- Mutual TLS: the client's chain as the server observed it, once per scenario run (from the
-- first successful handshake). Columns as in observed_chain.
CREATE TABLE observed_client_chain (
    run_id      VARCHAR NOT NULL,
    scenario_id VARCHAR NOT NULL,
    position    INTEGER NOT NULL,            -- 0 = the client's leaf, as sent
    der_bytes   INTEGER NOT NULL,
    subject     VARCHAR NOT NULL,
    sig_alg     VARCHAR NOT NULL,
    key_alg     VARCHAR NOT NULL,
    PRIMARY KEY (run_id, scenario_id, position)
);

-- Network profiles as configured and as calibrated before use (emulated links only).
CREATE TABLE network_profiles (
    run_id      VARCHAR NOT NULL,
    profile     VARCHAR NOT NULL,
    configured  JSON NOT NULL,               -- delay, jitter, rate, loss, mtu, queue, initcwnd
    measured    JSON,                        -- rtt_ms, rate_mbit, loss (NULL for loopback)
    flagged     BOOLEAN NOT NULL,            -- measured RTT or rate off by > 5 %
    PRIMARY KEY (run_id, profile)
);

-- Open-loop load steps of a scenario (the campaign's [load] table): one row per step, the
-- capacity measurement first (kind 'capacity', step 0), then one per offered load.
CREATE TABLE load_steps (
    run_id          VARCHAR NOT NULL,
    scenario_id     VARCHAR NOT NULL,
    step            INTEGER NOT NULL,        -- 0 = capacity, 1.. = offered loads in order
    kind            VARCHAR NOT NULL,        -- capacity | step
    fraction        DOUBLE,                  -- offered / measured capacity (NULL: absolute rate)
    offered_rate    DOUBLE NOT NULL,         -- attempts per second, as scheduled
    arrivals        VARCHAR NOT NULL,        -- constant | poisson
    duration_s      DOUBLE NOT NULL,         -- the schedule's length
    timeout_ms      BIGINT NOT NULL,         -- the generator's connect + handshake timeout
    max_in_flight   INTEGER NOT NULL,
    server_workers  INTEGER NOT NULL,
    server_cpus     VARCHAR,                 -- e.g. '0' (NULL: not pinned)
    generator_cpus  VARCHAR,
    scheduled       BIGINT NOT NULL,         -- attempts in the schedule
    started         BIGINT NOT NULL,
    n_ok            BIGINT NOT NULL,
    n_failed        BIGINT NOT NULL,         -- saturated included
    n_saturated     BIGINT NOT NULL,         -- generator_saturated
    wall_s          DOUBLE NOT NULL,         -- schedule start to the last attempt's end
    achieved_rate   DOUBLE NOT NULL,         -- successful handshakes per second of wall_s
    generator_cpu_s DOUBLE NOT NULL,         -- the generator process's CPU over wall_s
    generator_cores INTEGER NOT NULL,        -- cores the generator could use
    generator_limited BOOLEAN NOT NULL,      -- the generator, not the server, was the limit
    generator_note  VARCHAR,                 -- why it was flagged
    server_cpu_s    DOUBLE,                  -- sum of the step's connections' conn CPU
    server_cores    INTEGER NOT NULL,
    server_process_cpu_s DOUBLE,             -- the server process's CPU over the step (/proc)
    server_cores_busy DOUBLE,                -- share of its cores' time not idle (kernel too)
    listen_overflows BIGINT,                 -- accept queue full (TcpExt ListenOverflows)
    listen_drops    BIGINT,                  -- SYNs dropped at listen (TcpExt ListenDrops);
                                             --   NULL on emulated networks (another netns)
    link_timer_late_us_mean DOUBLE,          -- emulated links: the forwarder's timer lateness
                                             --   over the step (NULL on loopback)
    failures        JSON NOT NULL,           -- error category -> count
    PRIMARY KEY (run_id, scenario_id, step)
);

-- Every attempt of every load step (client record paired with the server's by conn_id).
CREATE TABLE load_samples (
    run_id          VARCHAR NOT NULL,
    scenario_id     VARCHAR NOT NULL,
    step            INTEGER NOT NULL,
    seq             BIGINT NOT NULL,
    intended_ns     BIGINT NOT NULL,         -- offset of the intended start in the step
    sched_lag_ns    BIGINT,                  -- NULL: never started (generator_saturated)
    latency_ns      BIGINT,                  -- intended start to the handshake's end
    total_ns        BIGINT,                  -- connect + handshake from the actual start
    outcome         VARCHAR NOT NULL,
    error_category  VARCHAR,
    resumed         BOOLEAN,
    client_cpu_ns   BIGINT,
    server_cpu_ns   BIGINT,
    server_conn_cpu_ns BIGINT,
    client_kind     VARCHAR,                 -- as in samples (version 8)
    chain_index     INTEGER,
    PRIMARY KEY (run_id, scenario_id, step, seq)
);

-- The host's speed: a fixed CPU-bound workload (`chainlab-engine reference`) timed at the
-- start and end of each scenario (step -1) and of each load step, on the server's cores.
CREATE TABLE host_reference (
    run_id      VARCHAR NOT NULL,
    scenario_id VARCHAR NOT NULL,
    step        INTEGER NOT NULL,            -- -1: the scenario; else the load step
    phase       VARCHAR NOT NULL,            -- start | end
    wall_ns     BIGINT NOT NULL,             -- the workload's wall time (lower: faster host)
    cpu_ns      BIGINT NOT NULL,             -- its thread CPU (wall >> cpu: a shared core)
    cpus        VARCHAR,                     -- where it ran (NULL: not pinned)
    steal_ns    BIGINT,                      -- the machine's steal time so far, all CPUs
                                             --   (/proc/stat; NULL: not reported, < v9)
    per_cpu_ns  JSON,                        -- not pinned (cpus NULL): the workload on each
                                             --   CPU at once, {"0": [wall ns, CPU ns], ...};
                                             --   wall_ns and cpu_ns are their means (NULL:
                                             --   pinned, or < v16: one run where it landed)
    PRIMARY KEY (run_id, scenario_id, step, phase)
);

-- Instructions per connection and side counted under valgrind's callgrind ([measure]
-- instructions = "callgrind", version 9): a few more handshakes after the scenario's samples,
-- each side collecting inside the engine's per-connection span only (docs/methods/instructions.md#instructions-per-handshake).
CREATE TABLE instruction_samples (
    run_id          VARCHAR NOT NULL,
    scenario_id     VARCHAR NOT NULL,
    seq             BIGINT NOT NULL,
    warmup          BOOLEAN NOT NULL,
    conn_id         VARCHAR,
    outcome         VARCHAR NOT NULL,
    error_category  VARCHAR,
    client_instructions BIGINT,              -- the client's attempt, connect to close
    server_instructions BIGINT,              -- the server's connection, accept to close
    source          VARCHAR NOT NULL,        -- the counter: 'callgrind (valgrind-3.19.0)'
    random          VARCHAR NOT NULL DEFAULT 'system', -- the handshakes' random bytes:
                                             -- 'system', or 'seeded' ([measure] random)
    PRIMARY KEY (run_id, scenario_id, seq)
);

-- The cost model's inputs (docs/methods/cost-model.md#cost-model): cryptographic primitives timed
-- in-process by `chainlab-engine primitives`, one row per timed operation, and reference
-- handshakes (subject 'tls-reference:<name>') that measure the TLS overhead beyond them.
-- A run keeps the rows it used; rows taken from the primitives cache keep the run and the
-- time that measured them.
CREATE TABLE primitive_samples (
    run_id        VARCHAR NOT NULL,          -- the run that holds (used) the row
    implementation VARCHAR,                  -- whose code ran it (chainlab.campaign.
                                             -- implementations); a reference handshake:
                                             -- the stack; NULL before 13: OpenSSL 3.5's
    subject       VARCHAR NOT NULL,          -- signature algorithm, group, compression, or
                                             -- 'tls-reference:<name>'
    op            VARCHAR NOT NULL,          -- sign | verify | keygen | encaps | decaps |
                                             -- derive | decompress | full | resumed
    message       VARCHAR,                   -- sign/verify: cv | cert; else NULL
    message_bytes BIGINT,                    -- bytes signed, verified or decompressed
    seq           BIGINT NOT NULL,
    wall_ns       BIGINT NOT NULL,           -- primitive: the operation; reference: latency
    cpu_ns        BIGINT NOT NULL,           -- primitive: its thread CPU; reference: client CPU
    server_cpu_ns BIGINT,                    -- reference handshakes: the server's CPU
    kib           DOUBLE,                    -- reference handshakes: KiB carried (both ways)
    measured_run  VARCHAR NOT NULL,          -- the run that measured it (this one or a cache's)
    measured_at   TIMESTAMP NOT NULL,        -- UTC, when its batch ran
    host_cpu_ns   BIGINT                     -- the host reference workload's CPU time around
                                             -- its measurement, the mean of the readings
                                             -- before and after (host_reference's: lower is
                                             -- faster; NULL: not read, before 16)
);
