//! Constraints on a node's pins, in a copy of `examples/hello` whose `greet` node asks
//! 2 to 40 characters of its `name` input and at most 30 of its `message` output:
//! a wire whose source does not guarantee the input's constraints is checked before the
//! node runs (500 `node_input_invalid`, the node not run), the output after it (500
//! `node_output_invalid`); once the request's own input carries the constraints, the
//! edge refuses the value (400) and the node's check is not generated.

use crate::harness::{client, error_of, json_of, project_binary, start_binary};
use crate::support::{edit, example_copy};
use std::path::{Path, PathBuf};

fn hello_copy(name: &str) -> PathBuf {
    let dir = example_copy("hello", &format!("e2e-{name}"));
    edit(
        &dir.join("src/nodes/greet.rs"),
        &[
            (
                "t::string().default(\"world\")",
                "t::string().default(\"world\").min_length(2).max_length(40)",
            ),
            ("message: t::string(),", "message: t::string().max_length(30),"),
        ],
    );
    dir
}

fn generated_route(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(".svc/server/src/routes/greeting.rs")).unwrap()
}

#[tokio::test]
async fn a_wire_its_source_does_not_guarantee_is_checked_before_the_node_runs() {
    let dir = hello_copy("pin-constraints");
    let bin = project_binary("hello-pin-constraints", &dir);
    assert!(generated_route(&dir).contains("At::INPUT.field(\"name\")"));
    let (server, _) = start_binary("hello", &bin, &[], &[], |_| ());
    let c = client();
    let body = json_of(c.get(server.url("/demo/hello/greeting?name=Ada"))).await;
    assert_eq!(body["message"], "Hello, Ada!");

    let (status, e) = error_of(c.get(server.url("/demo/hello/greeting?name=A"))).await;
    assert_eq!(status, 500);
    assert_eq!(e["error"]["code"], "node_input_invalid");
    assert_eq!(e["error"]["node"], "hello.greet");
    assert_eq!(
        e["error"]["message"],
        "the node's input breaks a constraint: `/name` must be at least 2 characters long (minLength)"
    );

    // 36 characters pass the input's limit; "Hello, …!" is then 44, over the output's 30.
    let name = "a".repeat(36);
    let (status, e) = error_of(c.get(server.url(&format!("/demo/hello/greeting?name={name}")))).await;
    assert_eq!(status, 500);
    assert_eq!(e["error"]["code"], "node_output_invalid");
    assert_eq!(
        e["error"]["message"],
        "the node's output breaks a constraint: `/message` must be at most 30 characters long (maxLength)"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_source_with_the_same_constraints_moves_the_check_to_the_edge() {
    let dir = hello_copy("pin-constraints-edge");
    edit(
        &dir.join("flows/greeting.yaml"),
        &[(
            "name: { type: string, required: false, description: Who to greet }",
            "name: { type: string, required: false, description: Who to greet, minLength: 2, maxLength: 40 }\n    when: { type: string, required: false, format: date-time }",
        )],
    );
    let bin = project_binary("hello-pin-constraints-edge", &dir);
    assert!(!generated_route(&dir).contains("At::INPUT"));
    let (server, _) = start_binary("hello", &bin, &[], &[], |_| ());
    let (status, e) = error_of(client().get(server.url("/demo/hello/greeting?name=A"))).await;
    assert_eq!(status, 400);
    assert_eq!(e["error"]["code"], "invalid_request");
    assert_eq!(e["error"]["violations"][0]["pointer"], "/name");
    assert_eq!(e["error"]["violations"][0]["in"], "query");
    // A multi-byte character where a date-time's `T` is expected: a 400 like any other
    // malformed value (it once panicked, a 500 whose log line repeated the value).
    let (status, e) =
        error_of(client().get(server.url("/demo/hello/greeting?when=2024-01-0%C3%A9T00:00:00Z%0AINFO"))).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["violations"][0]["pointer"], "/when");
    assert_eq!(e["error"]["violations"][0]["constraint"], "format");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
