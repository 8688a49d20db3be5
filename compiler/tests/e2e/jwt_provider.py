#!/usr/bin/env python3
"""An identity provider for Check JWT's tests, on a loopback port: an OpenID Connect
discovery document and a JWK set, and tokens signed by PyJWT (a library that is not
svc's) with the keys it publishes, or with keys and headers an attacker would use.

    python3 jwt_provider.py   ->  prints "listening on http://127.0.0.1:<port>" and serves:

    GET  /realms/demo/.well-known/openid-configuration   the discovery document
    GET  /realms/demo/certs                              the JWK set (503 while down)
    POST /mint     {"key": "rsa"|"ec"|"ed"|"attacker"|<kid>, "alg": "RS256", "claims": {...},
                    "headers": {...}, "raw": "<header>.<claims>" (signed as given),
                    "secret": "<text>" (HMAC with it)}   -> the token, as text
    POST /rotate   {"drop": [<kid>, ...]}  a new RSA key, published; the kids dropped are
                   no longer published (their private keys still sign, as a leaked or
                   rotated-out key would)                 -> the new kid
    POST /down, POST /up                                  the JWK set answers 503, or again
    GET  /pem/<kid>          the public key of <kid> in PEM (SubjectPublicKeyInfo)
    GET  /stats              {"certs": <JWK set fetches>, "other_paths": [<any other GET>]}
"""

import base64
import hashlib
import hmac
import http.server
import json
import sys
import threading

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

ISSUER_PATH = "/realms/demo"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Provider:
    def __init__(self):
        self.lock = threading.Lock()
        self.keys = {}  # kid -> (private key, JWK of the public key)
        self.published = []  # kids in the JWK set
        self.down = False
        self.certs_fetches = 0
        self.other_paths = []
        self.rotations = 0
        self.add("rsa", rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256")
        self.add("ec", ec.generate_private_key(ec.SECP256R1()), "ES256")
        self.add("ed", ed25519.Ed25519PrivateKey.generate(), "EdDSA")
        # An attacker's key: signs, never published.
        self.add("attacker", ec.generate_private_key(ec.SECP256R1()), "ES256")
        self.published.remove("attacker")

    def add(self, kid, private, alg):
        algorithm = jwt.get_algorithm_by_name(alg)
        public = json.loads(algorithm.to_jwk(private.public_key()))
        public.update({"kid": kid, "use": "sig"})
        self.keys[kid] = (private, public)
        self.published.append(kid)

    def jwks(self):
        return {"keys": [self.keys[k][1] for k in self.published]}

    def mint(self, request):
        headers = dict(request.get("headers", {}))
        alg = request.get("alg", "RS256")
        if "secret" in request:
            return jwt.encode(request["claims"], request["secret"], algorithm=alg, headers=headers)
        if "hmac_with_public_key" in request:
            # Algorithm confusion: HS256 keyed with the PEM of a published public key,
            # which PyJWT itself refuses to do.
            _, public = self.keys[request["hmac_with_public_key"]]
            key = self.keys[request["hmac_with_public_key"]][0].public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            header = {"alg": "HS256", "typ": "JWT", **headers}
            signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(request["claims"]).encode())
            return signing_input + "." + b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())
        kid = request.get("key", "rsa")
        private, _ = self.keys[kid]
        headers.setdefault("kid", kid)
        if "raw" in request:
            # The signing input exactly as given (duplicate claims, odd encodings).
            signing_input = request["raw"].encode()
            signature = jwt.get_algorithm_by_name(alg).sign(signing_input, private)
            return request["raw"] + "." + b64(signature)
        return jwt.encode(request["claims"], private, algorithm=alg, headers=headers)

    def rotate(self, request):
        self.rotations += 1
        kid = f"rsa-{self.rotations}"
        self.add(kid, rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256")
        self.published = [k for k in self.published if k not in request.get("drop", [])]
        return kid


def serve():
    provider = Provider()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body, content_type="application/json"):
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            base = f"http://127.0.0.1:{self.server.server_address[1]}{ISSUER_PATH}"
            with provider.lock:
                if self.path == f"{ISSUER_PATH}/.well-known/openid-configuration":
                    self.answer(200, {"issuer": base, "jwks_uri": f"{base}/certs"})
                elif self.path == f"{ISSUER_PATH}/certs":
                    provider.certs_fetches += 1
                    if provider.down:
                        self.answer(503, {"error": "down"})
                    else:
                        self.answer(200, provider.jwks())
                elif self.path.startswith("/pem/"):
                    private, _ = provider.keys[self.path[5:]]
                    pem = private.public_key().public_bytes(
                        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
                    )
                    self.answer(200, pem.decode(), "text/plain")
                elif self.path == "/stats":
                    self.answer(200, {"certs": provider.certs_fetches, "other_paths": provider.other_paths})
                else:
                    provider.other_paths.append(self.path)
                    self.answer(404, {"error": "not found"})

        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            with provider.lock:
                if self.path == "/mint":
                    self.answer(200, provider.mint(request), "text/plain")
                elif self.path == "/rotate":
                    self.answer(200, provider.rotate(request), "text/plain")
                elif self.path in ("/down", "/up"):
                    provider.down = self.path == "/down"
                    self.answer(200, {})
                else:
                    self.answer(404, {"error": "not found"})

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(serve())
