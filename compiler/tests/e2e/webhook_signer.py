"""The providers' own webhook code, for Check Signature's end-to-end test.

Reads one JSON request per line on stdin and answers one JSON line on stdout:

  {"sign": "stripe" | "standard-webhooks", "secret": ..., "body_hex": ..., "id": ..., "timestamp": ...}
      -> {"headers": {name: value}}: the headers the provider's library makes
  {"verify": "stripe" | "standard-webhooks", "secret": ..., "body_hex": ..., "headers": {...}}
      -> {"ok": true} or {"ok": false, "error": ...}: the provider's library's verdict

Stripe's library has no public way to make a signature header (only its verifier is
public), so the signature is its private `_compute_signature`: the provider's own code
all the same.
"""

import datetime
import json
import sys

import standardwebhooks
import stripe


def sign(request):
    body = bytes.fromhex(request["body_hex"])
    t = int(request["timestamp"])
    if request["sign"] == "stripe":
        payload = f"{t}.{body.decode('utf-8')}"
        v1 = stripe.WebhookSignature._compute_signature(payload, request["secret"])
        return {"stripe-signature": f"t={t},v1={v1}"}
    webhook = standardwebhooks.Webhook(request["secret"])
    when = datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc)
    signature = webhook.sign(request["id"], when, body.decode("utf-8"))
    return {"webhook-id": request["id"], "webhook-timestamp": str(t), "webhook-signature": signature}


def verify(request):
    body = bytes.fromhex(request["body_hex"])
    headers = request["headers"]
    try:
        if request["verify"] == "stripe":
            stripe.WebhookSignature.verify_header(body.decode("utf-8"), headers["stripe-signature"], request["secret"], tolerance=300)
        else:
            standardwebhooks.Webhook(request["secret"]).verify(body, headers)
        return {"ok": True}
    except Exception as e:  # the libraries' own refusals
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


for line in sys.stdin:
    request = json.loads(line)
    answer = {"headers": sign(request)} if "sign" in request else verify(request)
    print(json.dumps(answer), flush=True)
