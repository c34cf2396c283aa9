"""Real servers for the remote-data tests, started on free ports of 127.0.0.1 and stopped at
the end of the session (conftest.py turns them into session fixtures):

* ``NginxServer``: Debian's nginx serving a temporary directory over HTTP/1.1 (Range,
  keep-alive) and HTTPS (HTTP/2, a self-signed certificate made by ``openssl`` here; its
  ``ca_file`` trusts it). ``/bearer-bucket/`` answers 401 without
  ``Authorization: Bearer good-token`` (GCS's bearer-token path, checked by nginx);
  ``/no-head/`` refuses HEAD with 405 (as a presigned GET URL does).
* ``MotoServer``: moto's standalone S3 server (``python -m moto.server``), in its own process.
  ``strict=True`` makes one that checks SigV4 signatures and IAM permissions: an IAM user
  with an access key allowed ``s3:*`` on ``private-bucket`` only (and to assume
  ``role_arn``, which gives temporary keys with a session token) is made, then
  authentication is switched on (moto's ``/moto-api/reset-auth``).
* ``FaultProxy``: an asyncio HTTP proxy in front of nginx that adds latency, answers 503 or
  429, resets connections, truncates bodies or cuts them while keeping the headers
  consistent, per request as a test asks (``proxy.set(...)``).

A server whose program is missing is skipped with the reason; any other failure to start
is an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout: float = 30.0, what: str = "server"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} before listening on port {port}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout} s")


def stop_process(proc: subprocess.Popen):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------------------------------------
# nginx
# ------------------------------------------------------------------------------------------

NGINX_CONF = """
daemon off;
worker_processes 1;
{user}
error_log {work}/error.log warn;
pid {work}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    # which connection served each request: tests check reuse and the protocol (HTTP/2)
    log_format reuse '$connection $connection_requests $server_protocol $request_method $uri $status';
    access_log {work}/access.log reuse;
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 60;
    keepalive_requests 100000;
    client_body_temp_path {work}/client_body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    server {{
        listen {host}:{port};
        listen {host}:{tls_port} ssl http2;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        root {root};
        location / {{ }}
        location /bearer-bucket/ {{
            if ($http_authorization != "Bearer good-token") {{ return 401; }}
        }}
        location /no-head/ {{
            if ($request_method = HEAD) {{ return 405; }}
        }}
    }}
}}
"""


class NginxServer:
    def __init__(self):
        self.nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
        self.openssl = shutil.which("openssl")

    def start(self):
        self.work = Path(tempfile.mkdtemp(prefix="b2lazy_nginx_"))
        self.root = self.work / "www"
        self.root.mkdir()
        os.chmod(self.work, 0o755)
        subprocess.run(
            [
                self.openssl,
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                str(self.work / "key.pem"),
                "-out",
                str(self.work / "cert.pem"),
                "-days",
                "2",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
            ],
            check=True,
            capture_output=True,
        )
        self.ca_file = str(self.work / "cert.pem")
        self.port, self.tls_port = free_port(), free_port()
        # As root, nginx's workers would drop to "nobody": keep them as this user.
        user = f"user {pwd.getpwuid(os.getuid()).pw_name};" if os.getuid() == 0 else ""
        conf = self.work / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(
                user=user, work=self.work, host=HOST, port=self.port, tls_port=self.tls_port, root=self.root
            )
        )
        self.proc = subprocess.Popen(
            [self.nginx, "-c", str(conf), "-p", str(self.work)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.port, self.proc, what="nginx")
        wait_for_port(self.tls_port, self.proc, what="nginx (TLS)")
        self.url = f"http://{HOST}:{self.port}"
        self.https_url = f"https://{HOST}:{self.tls_port}"
        return self

    def access_log(self) -> list[dict]:
        """The requests served so far: connection, its request count, protocol, method, uri,
        status (nginx writes each line when the request is done)."""
        out = []
        for line in (self.work / "access.log").read_text().splitlines():
            c, n, proto, method, rest = line.split(" ", 4)
            uri, status = rest.rsplit(" ", 1)  # ($uri is decoded: it may hold spaces)
            out.append(
                {
                    "connection": int(c),
                    "requests": int(n),
                    "protocol": proto,
                    "method": method,
                    "uri": uri,
                    "status": int(status),
                }
            )
        return out

    def put(self, name: str, data: bytes) -> str:
        """Writes a file served at ``name``; returns its http:// URL."""
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return f"{self.url}/{name}"

    def stop(self):
        stop_process(self.proc)
        shutil.rmtree(self.work, ignore_errors=True)


# ------------------------------------------------------------------------------------------
# moto
# ------------------------------------------------------------------------------------------

STRICT_KEY = "AKIASTRICTTESTKEY01"
PRIVATE_BUCKET = "private-bucket"


class MotoServer:
    def __init__(self, strict: bool = False):
        self.strict = strict

    def start(self):
        self.port = free_port()
        env = dict(os.environ)
        # The server must not sign or be configured by the test environment's AWS settings.
        for k in list(env):
            if k.startswith("AWS_"):
                del env[k]
        # werkzeug logs each request: to a file (a pipe nobody reads would fill and block it)
        self.log = tempfile.NamedTemporaryFile(prefix="b2lazy_moto_", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(self.port)],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_for_port(self.port, self.proc, what="moto server")
        self.endpoint_url = f"http://{HOST}:{self.port}"
        self.key, self.secret = "testing", "testing"
        if self.strict:
            self._make_user_and_lock()
        return self

    def client(self, service="s3", key=None, secret=None):
        import boto3

        return boto3.client(
            service,
            endpoint_url=self.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id=key or self.key,
            aws_secret_access_key=secret or self.secret,
        )

    def storage_options(self, **extra):
        """s3fs-style storage options reaching this server."""
        return {"key": self.key, "secret": self.secret, "endpoint_url": self.endpoint_url, **extra}

    def set_env(self, monkeypatch):
        """The AWS_* variables that point S3 URLs at this server (credentials as the SDKs take them)."""
        for k, v in {
            "AWS_ACCESS_KEY_ID": self.key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(k, v)

    def make_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def _make_user_and_lock(self):
        import json

        import requests

        iam = self.client("iam")
        iam.create_user(UserName="reader")
        iam.put_user_policy(
            UserName="reader",
            PolicyName="bucket",
            PolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "s3:*",
                            "Resource": [f"arn:aws:s3:::{PRIVATE_BUCKET}", f"arn:aws:s3:::{PRIVATE_BUCKET}/*"],
                        },
                        {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"},
                    ],
                }
            ),
        )
        # a role the user may assume: temporary keys with a session token
        role = iam.create_role(
            RoleName="reader-role",
            AssumeRolePolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
                }
            ),
        )
        iam.put_role_policy(
            RoleName="reader-role",
            PolicyName="bucket",
            PolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "s3:*",
                            "Resource": [f"arn:aws:s3:::{PRIVATE_BUCKET}", f"arn:aws:s3:::{PRIVATE_BUCKET}/*"],
                        }
                    ],
                }
            ),
        )
        self.role_arn = role["Role"]["Arn"]
        k = iam.create_access_key(UserName="reader")["AccessKey"]
        self.key, self.secret = k["AccessKeyId"], k["SecretAccessKey"]
        self.client().create_bucket(Bucket=PRIVATE_BUCKET)
        # From now on every request is authenticated (signature checked) and authorized.
        requests.post(f"{self.endpoint_url}/moto-api/reset-auth", data=b"0").raise_for_status()

    def stop(self):
        stop_process(self.proc)
        self.log.close()
        os.unlink(self.log.name)


# ------------------------------------------------------------------------------------------
# the fault-injecting proxy
# ------------------------------------------------------------------------------------------

FAULTS = ("ok", "503", "429", "500", "reset", "truncate", "short_range", "stall", "ignore_range")


class FaultProxy:
    """An HTTP/1.1 proxy in front of ``upstream_port`` on 127.0.0.1 (nginx, or moto), on its own thread and event
    loop. Each request takes the next fault of the list given to ``set`` (then ``then``):
    "ok" (forwarded), "503"/"429"/"500" (answered here), "reset" (the connection closed with
    a TCP RST before any answer), "truncate" (the headers as sent, half the body, then the
    connection closed), "short_range" (a 206 whose body and Content-Length are cut to half
    while Content-Range still claims the whole range), "stall" (headers, then no body
    until the client gives up), "ignore_range" (the Range header dropped: a 200 with the
    whole object, as from a server without range support). ``latency`` seconds are added
    before each answer. ``in_flight_seen``: how many requests were in flight as each
    arrived (itself included), ``most_in_flight`` the most."""

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        with self._lock:
            self._faults: list[str] = []
            self._then = "ok"
            self.latency = 0.0
            self.seen: list[str] = []  # the fault applied to each request, in order
            self.in_flight = 0  # requests received and not yet answered
            self.most_in_flight = 0
            self.in_flight_seen: list[int] = []  # in flight as each request arrived (itself included)

    def set(self, faults=(), then="ok", latency=0.0):
        for f in [*faults, then]:
            assert f in FAULTS, f
        with self._lock:
            self._faults = list(faults)
            self._then = then
            self.latency = latency
            self.seen = []
            self.most_in_flight = 0
            self.in_flight_seen = []

    def _next_fault(self) -> str:
        with self._lock:
            f = self._faults.pop(0) if self._faults else self._then
            self.seen.append(f)
            return f

    def start(self):
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self._loop = asyncio.new_event_loop()
        started = threading.Event()

        def run():
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(asyncio.start_server(self._serve, HOST, self.port))
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="fault-proxy", daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("the fault proxy did not start")
        return self

    def stop(self):
        async def shutdown():
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:  # the connections clients keep alive
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _upstream(self, head: bytes, body: bytes) -> tuple[bytes, bytes]:
        reader, writer = await asyncio.open_connection(HOST, self.upstream_port)
        lines = head.split(b"\r\n")
        lines = [l for l in lines if not l.lower().startswith((b"connection:", b"expect:"))]
        writer.write(b"\r\n".join(lines[:-2]) + b"\r\nConnection: close\r\n\r\n" + body)
        await writer.drain()
        data = await reader.read()
        writer.close()
        resp_head, _, body = data.partition(b"\r\n\r\n")
        return resp_head, body

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                method = head.split(b" ", 1)[0]
                request_body = b""
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"expect" and b"100" in value:
                        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    if name.strip().lower() == b"content-length":
                        request_body = int(value)
                if request_body:
                    request_body = await reader.readexactly(request_body)
                fault = self._next_fault()
                with self._lock:
                    self.in_flight += 1
                    self.most_in_flight = max(self.most_in_flight, self.in_flight)
                    self.in_flight_seen.append(self.in_flight)
                try:
                    if not await self._answer(writer, head, method, request_body, fault):
                        return
                finally:
                    with self._lock:
                        self.in_flight -= 1
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(self, writer, head, method, request_body, fault) -> bool:
        """Answers one request as its fault says; False when the connection is done."""
        if self.latency:
            await asyncio.sleep(self.latency)
        if fault == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if fault in ("503", "429", "500"):
            body = f"<Error><Code>Injected</Code><Message>fault {fault}</Message></Error>".encode()
            writer.write(
                f"HTTP/1.1 {fault} Injected\r\nContent-Length: {len(body)}\r\nRetry-After: 0\r\n\r\n".encode() + body
            )
            await writer.drain()
            return True
        if fault == "ignore_range":
            head = b"\r\n".join(l for l in head.split(b"\r\n") if not l.lower().startswith(b"range:"))
        resp_head, body = await self._upstream(head, request_body or b"")
        lines = [l for l in resp_head.split(b"\r\n") if not l.lower().startswith((b"connection:", b"keep-alive:"))]
        if fault == "short_range" and lines[0].split(b" ")[1] == b"206" and len(body) > 1:
            body = body[: len(body) // 2]
            lines = [l for l in lines if not l.lower().startswith(b"content-length:")]
            lines.append(b"Content-Length: %d" % len(body))
        out = b"\r\n".join(lines) + b"\r\n\r\n"
        if fault == "truncate" and method != b"HEAD" and len(body) > 1:
            writer.write(out + body[: len(body) // 2])
            await writer.drain()
            writer.close()
            return False
        if fault == "stall" and method != b"HEAD":
            writer.write(out)
            await writer.drain()
            await asyncio.sleep(3600)
            return False
        writer.write(out + (b"" if method == b"HEAD" else body))
        await writer.drain()
        return True


# ------------------------------------------------------------------------------------------
# session fixtures' bodies (conftest.py registers them)
# ------------------------------------------------------------------------------------------


def nginx_server_fixture():
    server = NginxServer()
    if server.nginx is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light)")
    if server.openssl is None:
        pytest.skip("openssl is not installed (Debian: apt-get install openssl)")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def moto_server_fixture(strict: bool = False):
    try:
        import moto.server  # noqa: F401
    except ImportError as e:
        pytest.skip(f"moto's server is not installed (pip install 'moto[server]'): {e}")
    server = MotoServer(strict=strict).start()
    try:
        yield server
    finally:
        server.stop()


def fault_proxy_fixture(nginx: NginxServer):
    proxy = FaultProxy(nginx.port).start()
    try:
        yield proxy
    finally:
        proxy.stop()
