//! Flow files and their layouts: read, edited, put back (undo), new ones written, nodes
//! added and wires drawn; each refused with 409 when the file changed since the page
//! read it, and none through a link ([`crate::builder::files`]).

use super::{Refused, SharedState, State, bad_request, error, failed, forbidden};
use crate::builder::files;
use axum::extract::{Path as UrlPath, Request, State as Shared};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// `flows/<route>.layout.json`, for a route that exists (404 otherwise; 403 for a file
/// the Builder does not touch: [`files`]).
fn layout_file(state: &State, route: &str) -> Result<PathBuf, Refused> {
    flow_file(state, route)?;
    Ok(state.dir.join("flows").join(format!("{route}.layout.json")))
}

pub(super) async fn layout(Shared(state): SharedState, UrlPath(route): UrlPath<String>) -> Response {
    let file = match layout_file(&state, &route) {
        Ok(file) => file,
        Err(refused) => return refused.into_response(),
    };
    let text = match files::read_text(&file, &format!("flows/{route}.layout.json")) {
        Ok(text) => text,
        Err(refused) => return forbidden(refused),
    };
    let positions = text
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v.get("positions").cloned())
        .unwrap_or_else(|| json!({}));
    axum::Json(json!({ "positions": positions })).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Positions {
    positions: serde_json::Map<String, Value>,
}

pub(super) async fn save_layout(Shared(state): SharedState, UrlPath(route): UrlPath<String>, body: axum::body::Bytes) -> Response {
    let file = match layout_file(&state, &route) {
        Ok(file) => file,
        Err(refused) => return refused.into_response(),
    };
    if let Err(refused) = files::own_file(&file, &format!("flows/{route}.layout.json")) {
        return forbidden(refused);
    }
    let Ok(Positions { positions }) = serde_json::from_slice::<Positions>(&body) else {
        return bad_request("expected {\"positions\": {\"<node id>\": {\"x\": …, \"y\": …}}}");
    };
    // Whole numbers only: the file is committed, and diffs of float noise help nobody.
    let mut clean = serde_json::Map::new();
    for (id, at) in positions {
        let coordinate = |name: &str| {
            at.get(name)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite() && v.abs() < 1e7)
        };
        let (Some(x), Some(y)) = (coordinate("x"), coordinate("y")) else {
            return bad_request(format!("the position of `{id}` needs finite numbers x and y"));
        };
        clean.insert(id, json!({"x": x.round() as i64, "y": y.round() as i64}));
    }
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&json!({ "positions": clean })).unwrap_or_default()
    );
    match files::replace(&file, text.as_bytes()) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => failed(format!("cannot write `{}`: {e}", file.display())),
    }
}

/// `flows/<route>.yaml` (or `.yml`), for a route name that is a plain file name: 404
/// when there is none, 403 when it is not a file of the project's own ([`files`]).
fn flow_file(state: &State, route: &str) -> Result<PathBuf, Refused> {
    let valid = !route.is_empty()
        && route
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !route.starts_with('.');
    let no_such_flow = || Refused(StatusCode::NOT_FOUND, "no flow of that name".into());
    if !valid {
        return Err(no_such_flow());
    }
    match files::flow_file(&state.dir, route) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => Err(no_such_flow()),
        Err(refused) => Err(Refused(StatusCode::FORBIDDEN, refused.0)),
    }
}

/// A new route: `flows/<name>.yaml`, never over a file that exists.
pub(super) async fn new_flow(Shared(state): SharedState, body: axum::body::Bytes) -> Response {
    use crate::builder::flow_ops::{NewRoute, new_flow_text};
    let new = match serde_json::from_slice::<NewRoute>(&body) {
        Ok(n) => n,
        Err(e) => {
            return bad_request(format!(
                "expected {{\"name\", \"route\", \"methods\": [\"GET\"], \"summary\"?, \"body\"?}}: {e}"
            ));
        }
    };
    let valid_name = !new.name.is_empty()
        && new
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !new.name.starts_with(['-', '_']);
    if !valid_name {
        return bad_request("a flow's name is its file name: letters, digits, `-` and `_`, such as `create-order`");
    }
    if let Some(problem) = new.problem() {
        return bad_request(problem);
    }
    let flows = match files::flows_dir(&state.dir) {
        Ok(flows) => flows,
        Err(refused) => return forbidden(refused),
    };
    let file = flows.join(format!("{}.yaml", new.name));
    match files::flow_file(&state.dir, &new.name) {
        Ok(None) => {}
        Ok(Some(_)) | Err(_) => {
            return error(
                StatusCode::CONFLICT,
                &format!("`flows/{}.yaml` exists already", new.name),
            );
        }
    }
    // The editor's schema line of the project's other flows (or of `svc init`'s).
    let mut others: Vec<PathBuf> = std::fs::read_dir(&flows)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    others.sort();
    let schema_line = others
        .iter()
        .filter_map(|p| files::read_text(p, "").ok().flatten())
        .find_map(|t| {
            t.lines()
                .next()
                .filter(|l| l.starts_with("# yaml-language-server:"))
                .map(str::to_string)
        })
        .or_else(|| {
            state
                .dir
                .join("schemas/flow.schema.json")
                .is_file()
                .then(|| "# yaml-language-server: $schema=../schemas/flow.schema.json".to_string())
        });
    let served = match state.config() {
        Some(config) => config.served_path(new.route.trim_matches('/')),
        None => format!("/{}", new.route.trim_matches('/')),
    };
    let text = new_flow_text(&new, &served, schema_line.as_deref());
    // Written whole beside it, then linked in: the file appears complete, and one that
    // appeared meanwhile is not overwritten (a link to an existing name fails).
    let made_dir = match std::fs::create_dir(&flows) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    };
    match made_dir.and_then(|()| files::create(&file, text.as_bytes())) {
        Ok(()) => (
            StatusCode::CREATED,
            axum::Json(json!({ "name": new.name, "version": crate::builder::edit::version(text.as_bytes()), "text": text })),
        )
            .into_response(),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => error(
            StatusCode::CONFLICT,
            &format!("`flows/{}.yaml` exists already", new.name),
        ),
        Err(e) => failed(format!("cannot write `{}`: {e}", file.display())),
    }
}

pub(super) async fn flow_text(Shared(state): SharedState, UrlPath(route): UrlPath<String>) -> Response {
    let file = match flow_file(&state, &route) {
        Ok(file) => file,
        Err(refused) => return refused.into_response(),
    };
    match files::read_text(&file, &format!("flows/{route}")) {
        Ok(Some(text)) => {
            axum::Json(json!({ "version": crate::builder::edit::version(text.as_bytes()), "text": text })).into_response()
        }
        Ok(None) => error(StatusCode::NOT_FOUND, "no flow of that name"),
        Err(refused) => forbidden(refused),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EditBatch {
    /// The version the edits were made against.
    base: String,
    edits: Vec<crate::builder::edit::Edit>,
}

impl FlowRequest for EditBatch {
    const SHAPE: &'static str = "{\"base\": <version>, \"edits\": [{\"op\": \"set\", \"path\": […], \"value\": …}, …]}";
}

pub(super) async fn edit_flow(FlowBody { file, request: batch, .. }: FlowBody<EditBatch>) -> Response {
    match crate::builder::edit::apply(&file, &batch.base, &batch.edits) {
        Ok((previous, text)) => written(&previous, &text),
        Err(refused) => refusal(refused),
    }
}

/// A node added, renamed or deleted, against the version the Builder read.
#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "lowercase", deny_unknown_fields)]
pub(super) enum NodeAction {
    Add {
        base: String,
        #[serde(rename = "type")]
        node_type: String,
        #[serde(default)]
        node: Option<String>,
        #[serde(default)]
        id: Option<String>,
    },
    Rename {
        base: String,
        id: String,
        to: String,
    },
    Delete {
        base: String,
        id: String,
    },
}

impl FlowRequest for NodeAction {
    const SHAPE: &'static str = "{\"action\": \"add\" | \"rename\" | \"delete\", \"base\": <version>, …}";
}

pub(super) async fn node_action(FlowBody { file, request: action, .. }: FlowBody<NodeAction>) -> Response {
    use crate::builder::flow_ops;
    let mut added = None;
    let result = match &action {
        NodeAction::Add {
            base,
            node_type,
            node,
            id,
        } => crate::builder::edit::apply_planned(&file, base, |flow| {
            let id = id
                .clone()
                .unwrap_or_else(|| flow_ops::fresh_id(flow, node_type, node.as_deref()));
            let edits = flow_ops::add_node(flow, &id, node_type, node.as_deref());
            added = Some(id);
            edits
        }),
        NodeAction::Rename { base, id, to } => {
            crate::builder::edit::apply_planned(&file, base, |flow| flow_ops::rename_node(flow, id, to))
        }
        NodeAction::Delete { base, id } => {
            crate::builder::edit::apply_planned(&file, base, |flow| flow_ops::delete_node(flow, id))
        }
    };
    match result {
        Ok((previous, text)) => {
            let mut answer = written_json(&previous, &text);
            answer["node"] = json!(added);
            axum::Json(answer).into_response()
        }
        Err(refused) => refusal(refused),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WireRequest {
    base: String,
    from: crate::builder::wiring::End,
    to: crate::builder::wiring::End,
    /// Only say whether the wire can be drawn (while it is being dragged).
    #[serde(default)]
    check: bool,
}

impl FlowRequest for WireRequest {
    const SHAPE: &'static str = "{\"base\", \"from\": {\"node\", \"pin\"}, \"to\": {\"node\", \"pin\"}}";
}

pub(super) async fn wire(FlowBody { state, route, file, request }: FlowBody<WireRequest>) -> Response {
    let dir = state.dir.clone();
    let planned = {
        let (route, from, to) = (route.clone(), request.from.clone(), request.to.clone());
        tokio::task::spawn_blocking(move || crate::builder::wiring::plan(&dir, &route, &from, &to)).await
    };
    let planned = match planned {
        Ok(p) => p,
        Err(e) => return failed(format!("checking the wire failed: {e}")),
    };
    if request.check {
        return match planned {
            Ok(_) => axum::Json(json!({ "ok": true })).into_response(),
            Err(reason) => axum::Json(json!({ "ok": false, "message": reason })).into_response(),
        };
    }
    let edits = match planned {
        Ok(edits) => edits,
        Err(reason) => return error(StatusCode::UNPROCESSABLE_ENTITY, &reason),
    };
    match crate::builder::edit::apply(&file, &request.base, &edits) {
        Ok((previous, text)) => written(&previous, &text),
        Err(refused) => refusal(refused),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Restore {
    base: String,
    text: String,
}

impl FlowRequest for Restore {
    const SHAPE: &'static str = "{\"base\": <version>, \"text\": <the flow file>}";
}

/// Undo and redo: the Builder puts back a text the file had, against the version it
/// holds now, so a change made elsewhere meanwhile is never lost either.
pub(super) async fn restore_flow(FlowBody { file, request, .. }: FlowBody<Restore>) -> Response {
    let Restore { base, text } = request;
    match crate::builder::edit::restore(&file, &base, &text) {
        Ok(()) => axum::Json(json!({ "version": crate::builder::edit::version(text.as_bytes()), "text": text })).into_response(),
        Err(refused) => refusal(refused),
    }
}

/// A request about one flow, and its JSON shape in words (for a refusal).
pub(super) trait FlowRequest: serde::de::DeserializeOwned {
    const SHAPE: &'static str;
}

/// What a request about one flow brings its handler, read before the handler runs: the
/// Builder's state, the route named in the path, its flow file and the JSON body as `T`.
/// Refused (404 for a flow that does not exist, 400 naming `T::SHAPE`) otherwise.
pub(super) struct FlowBody<T> {
    state: Arc<State>,
    route: String,
    file: PathBuf,
    request: T,
}

impl<T: FlowRequest> axum::extract::FromRequest<Arc<State>> for FlowBody<T> {
    type Rejection = Response;

    async fn from_request(request: Request, state: &Arc<State>) -> Result<Self, Response> {
        use axum::extract::FromRequestParts;
        let (mut parts, body) = request.into_parts();
        let UrlPath(route) = UrlPath::<String>::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        // As the `Bytes` extractor reads it: within the body limit.
        let body = axum::body::Bytes::from_request(Request::from_parts(parts, body), state)
            .await
            .map_err(IntoResponse::into_response)?;
        let file = flow_file(state, &route).map_err(IntoResponse::into_response)?;
        let request = serde_json::from_slice::<T>(&body)
            .map_err(|e| bad_request(format!("expected {}: {e}", T::SHAPE)))?;
        Ok(FlowBody {
            state: state.clone(),
            route,
            file,
            request,
        })
    }
}

/// The answer to a flow edit that was written: the file's new text and version, and the
/// text it had (what the Builder's undo puts back).
fn written_json(previous: &str, text: &str) -> Value {
    json!({
        "version": crate::builder::edit::version(text.as_bytes()),
        "text": text,
        "previous": { "version": crate::builder::edit::version(previous.as_bytes()), "text": previous },
    })
}

fn written(previous: &str, text: &str) -> Response {
    axum::Json(written_json(previous, text)).into_response()
}

fn refusal(refused: crate::builder::edit::Refused) -> Response {
    use crate::builder::edit::Refused;
    match refused {
        Refused::Conflict { current } => {
            let body = json!({
                "error": {
                    "status": 409,
                    "message": "the flow file changed since the Builder read it (in a text editor, another tab or git); nothing was written: review it and make the edit again",
                },
                "current": { "version": crate::builder::edit::version(current.as_bytes()), "text": current },
            });
            (StatusCode::CONFLICT, axum::Json(body)).into_response()
        }
        Refused::Invalid(why) => error(StatusCode::UNPROCESSABLE_ENTITY, &why),
        Refused::Io(why) => failed(why),
    }
}
