"""The chrome client profile is Chromium's ClientHello: both captured on loopback (a socket
that reads the first TLS record and answers nothing), Chromium headless from the machine's
packages and the BoringSSL engine's `handshake --client-profile chrome`, and compared
extension by extension: the same extensions, groups, key shares, signature schemes, ALPN,
ALPS, certificate compression, versions and trust anchor IDs. GREASE values and key shares'
bytes are random in both; the engine names its server (SNI) where Chromium sends none to an
address. Skipped, saying so, where no Chromium is installed (scripts/install-deps.sh
chromium installs it)."""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import tempfile
import threading

import pytest

from chainlab import engine

SNI = 0x0000
# Compared byte for byte once GREASE values are set aside: the list's body.
SAME_BODY = {
    0x000A: "supported_groups",
    0x000D: "signature_algorithms",
    0x0010: "ALPN",
    0x001B: "compress_certificate",
    0x002B: "supported_versions",
    0x44CD: "ALPS (application_settings, new code point)",
    0xCA34: "trust_anchors",
}


def grease(value: int) -> bool:
    return value & 0x0F0F == 0x0A0A and value >> 8 == value & 0xFF


def first_record(argv_for_port, timeout: float = 60) -> bytes:
    """The first TLS record a client started by `argv_for_port(port)` sends to a loopback
    socket that answers nothing."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(timeout)
    got: dict[str, bytes] = {}

    def read() -> None:
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        conn.settimeout(10)
        data = b""
        while len(data) < 5 or len(data) < 5 + struct.unpack(">H", data[3:5])[0]:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        got["record"] = data
        conn.close()

    reader = threading.Thread(target=read)
    reader.start()
    with tempfile.TemporaryFile() as err:
        client = subprocess.Popen(
            argv_for_port(srv.getsockname()[1]), stdout=subprocess.DEVNULL, stderr=err
        )
        reader.join(timeout + 5)
        client.kill()
        client.wait()
    srv.close()
    assert "record" in got, f"{argv_for_port(0)[0]} sent no ClientHello in {timeout} s"
    return got["record"]


def extensions(record: bytes) -> dict[int, bytes]:
    """The ClientHello's extensions, by type (GREASE ones left out)."""
    body = record[5 : 5 + struct.unpack(">H", record[3:5])[0]]
    assert body[0] == 1, "not a ClientHello"
    hello = body[4:]
    i = 2 + 32
    i += 1 + hello[i]  # session id
    i += 2 + struct.unpack(">H", hello[i : i + 2])[0]  # cipher suites
    i += 1 + hello[i]  # compression methods
    end = i + 2 + struct.unpack(">H", hello[i : i + 2])[0]
    i += 2
    out = {}
    while i < end:
        kind, size = struct.unpack(">HH", hello[i : i + 4])
        if not grease(kind):
            out[kind] = hello[i + 4 : i + 4 + size]
        i += 4 + size
    return out


def without_grease(body: bytes, header: int) -> bytes:
    """A list extension's body with its GREASE entries (two bytes each) left out."""
    items = [body[i : i + 2] for i in range(header, len(body), 2)]
    return b"".join(x for x in items if not grease(struct.unpack(">H", x)[0]))


def key_share_groups(body: bytes) -> list[int]:
    i, out = 2, []
    while i < len(body):
        group, size = struct.unpack(">HH", body[i : i + 4])
        if not grease(group):
            out.append(group)
        i += 4 + size
    return out


def test_the_chrome_profile_sends_chromiums_client_hello(engine_bin):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium on this machine (scripts/install-deps.sh chromium)")
    version = subprocess.run([chromium, "--version"], capture_output=True, text=True).stdout
    browser = extensions(
        first_record(
            lambda port: [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                          f"--user-data-dir={tempfile.mkdtemp()}", f"https://127.0.0.1:{port}/"]
        )
    )  # fmt: skip
    ours = extensions(
        first_record(
            lambda port: [str(engine.stack_path("boringssl")), "handshake", "--connect",
                          f"127.0.0.1:{port}", "--no-verify", "--client-profile", "chrome",
                          "--groups", "X25519MLKEM768", "--count", "1", "--warmup", "0",
                          "--records", "/dev/null"]
        )
    )  # fmt: skip
    assert set(browser) == set(ours) - {SNI}, (version, sorted(browser), sorted(ours))
    for kind, name in SAME_BODY.items():
        header = {0x000A: 2, 0x000D: 2, 0x002B: 1}.get(kind)
        a, b = browser[kind], ours[kind]
        if header is not None:
            a, b = without_grease(a, header), without_grease(b, header)
        assert a == b, f"{name} differs from {version.strip()}'s: {a.hex()} vs {b.hex()}"
    assert key_share_groups(browser[0x0033]) == key_share_groups(ours[0x0033])
    assert len(browser[0x0033]) == len(ours[0x0033])  # the same shares, their sizes
