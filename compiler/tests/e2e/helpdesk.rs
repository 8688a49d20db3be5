//! `examples/helpdesk`: TypeScript written from the spec alone (camelCase pins, async
//! `run`, web globals), answering byte for byte what Node.js gives for the same nodes
//! (`examples/helpdesk/src/nodes/tickets.test.ts` holds Node.js to the same text):
//! JavaScript's key order, not sorted, and its numbers.

use crate::harness::{client, start};

/// `JSON.stringify` of the response Node.js computes for the request below.
const AS_NODE_WRITES_IT: &str = concat!(
    r#"{"ticket":{"id":"UHJpbnRlciBv","subject":"Printer on fire","priority":"normal","tags":["hardware","printers"],"#,
    r#""reporterDomain":"example.com","link":"https://help.example.com/tickets/UHJpbnRlciBv?from=api","signature":"4898df4c"},"#,
    r#""summary":{"note":"URGENT Printer on fire [example.com]","labels":"hardware, printers","dev":false,"method":"POST","share":0.6666666666666666},"#,
    r#""urgent":true,"openedBy":"alice"}"#
);

#[tokio::test]
async fn answers_as_javascript_would_byte_for_byte() {
    let (server, key) = start("helpdesk", &[], |s| {
        s.secret("SIGNING_KEY", "test-signing-key");
        s.key("desk", "alice")
    });
    let r = client()
        .post(server.url("/acme/helpdesk/tickets"))
        .header("x-api-key", &key)
        .json(&serde_json::json!({
            "subject": "Printer on fire",
            "body": "The third-floor printer is on fire again",
            "reporterEmail": "ada@Example.COM",
            "tags": ["Hardware", " printers ", "hardware"],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.text().await.unwrap(), AS_NODE_WRITES_IT);
}
