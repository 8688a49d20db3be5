//! The Builder's HTTP API and the web app's files, behind the [`guard`](super::guard).
//!
//! | request                              | answer                                          |
//! |--------------------------------------|-------------------------------------------------|
//! | `GET /`, `GET /app/<file>`           | the web app (`builder/app/`)                    |
//! | `GET /api/project`                   | the project ([`super::model::Model`])           |
//! | `GET /api/code/<route>`              | its generated module, and each node's lines     |
//! | `GET /api/layout/<route>`            | the positions a user dragged nodes to           |
//! | `PUT /api/layout/<route>`            | keeps them, in `flows/<route>.layout.json`      |
//! | `POST /api/flows`                    | a new flow file, as the examples are written    |
//! | `GET /api/flows/<route>`             | the flow file's text and version                |
//! | `POST /api/flows/<route>/edit`       | edits it ([`super::edit`]); 409 if it changed   |
//! | `PUT /api/flows/<route>`             | puts back a text it had (undo); 409 likewise    |
//! | `POST /api/flows/<route>/node`       | adds, renames or deletes a node ([`super::flow_ops`]) |
//! | `POST /api/flows/<route>/wire`       | draws a wire, or (`check`) says why it cannot be |
//! | `GET /api/check/origin?value=<o>`    | what `svc check` says of an allowed origin      |
//! | `GET /api/check/setting?type=&key=&value=` | what reading a flow says of a node's setting (`value` is JSON) |
//! | `GET /api/keys`                      | API keys, as `svc keys list --format json`      |
//! | `POST /api/keys`                     | a new key, shown in this answer only            |
//! | `POST /api/keys/<id>/revoke`         | revokes it                                      |
//! | `POST /api/keys/<id>/rotate`         | a replacement, shown in this answer only        |
//! | `GET /api/secrets`                   | the declared secrets: set or missing, no values |
//! | `PUT /api/secrets/<name>`            | sets one (sealed; never shown back)             |
//! | `GET /api/dev?after=<n>`             | what `svc dev` does: building, serving, failed (waits for report n+1) |
//! | `GET /api/traces?after=<n>`          | requests served since trace n (waits for one)   |
//! | `POST /api/traces`                   | the dev server's trace of a request             |
//! | `POST /api/traces/<n>/replay`        | sends request n again                           |
//!
//! Errors are `{"error": {"status": …, "message": …}}`. No answer holds a secret value,
//! an API key other than one just issued, or a key hash.

use super::files;
use super::guard::{self, Admitted, Guard, Presented};
use super::traces::{KeyPlaces, Traces};
use crate::workspace::Workspace;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Request, State as Shared};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct State {
    dir: PathBuf,
    workspace: Workspace,
    guard: Guard,
    /// The requests the dev server answered.
    traces: Traces,
    /// Where the dev server listens (`http://127.0.0.1:8080`), when there is one.
    server: Option<String>,
    /// What the dev loop is doing, under `svc dev`.
    dev_status: Option<tokio::sync::watch::Receiver<super::dev_status::DevStatus>>,
    /// Where the flows read keys from, to redact them in traces; read again when older
    /// than [`KEY_PLACES_AGE`].
    key_places: Mutex<(Option<Instant>, KeyPlaces)>,
}

const KEY_PLACES_AGE: Duration = Duration::from_secs(2);

impl State {
    pub fn new(
        dir: PathBuf,
        workspace: Workspace,
        guard: Guard,
        server: Option<String>,
        dev_status: Option<tokio::sync::watch::Receiver<super::dev_status::DevStatus>>,
    ) -> State {
        State {
            dir,
            workspace,
            guard,
            traces: Traces::default(),
            server,
            dev_status,
            key_places: Mutex::new((None, KeyPlaces::default())),
        }
    }

    /// The project's config, read without leaving the project.
    fn config(&self) -> Option<svc_frontend::config::Config> {
        let vfs = svc_frontend::vfs::Confined::new(&self.dir)?;
        crate::project::Project::config_only_from(&vfs, &self.dir)
    }

    fn key_places(&self) -> KeyPlaces {
        let mut cached = self.key_places.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0.is_none_or(|at| at.elapsed() > KEY_PLACES_AGE) {
            *cached = (Some(Instant::now()), super::model::key_places(&self.dir));
        }
        cached.1.clone()
    }
}

type SharedState = Shared<Arc<State>>;

pub fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/app/{*path}", get(app_file))
        .route("/api/project", get(project))
        .route("/api/code/{route}", get(code))
        .route("/api/layout/{route}", get(layout).put(save_layout))
        .route("/api/flows", post(new_flow))
        .route("/api/flows/{route}", get(flow_text).put(restore_flow))
        .route("/api/check/origin", get(check_origin))
        .route("/api/check/setting", get(check_setting))
        .route("/api/flows/{route}/edit", post(edit_flow))
        .route("/api/flows/{route}/node", post(node_action))
        .route("/api/flows/{route}/wire", post(wire))
        .route("/api/keys", get(list_keys).post(create_key))
        .route("/api/keys/{id}/revoke", post(revoke_key))
        .route("/api/keys/{id}/rotate", post(rotate_key))
        .route("/api/secrets", get(list_secrets))
        .route("/api/secrets/{name}", put(set_secret))
        .route("/api/dev", get(dev_status))
        .route("/api/traces", get(traces).post(add_trace))
        .route("/api/traces/{seq}/replay", post(replay))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such page of the Builder") })
        .layer(axum::middleware::from_fn_with_state(state.clone(), admit))
        .with_state(state)
}

/// The guard, before every request.
async fn admit(Shared(state): SharedState, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let query_token = request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("token="));
    let presented = Presented {
        host: text("host"),
        origin: text("origin"),
        fetch_site: text("sec-fetch-site"),
        cookie: text("cookie"),
        header_token: text(guard::HEADER),
        query_token,
    };
    // A write is JSON, or comes with the header only a script can set: an HTML form
    // (which can post across sites with neither `Origin` nor `Sec-Fetch-Site` from an
    // older browser) sends neither.
    let writes = !matches!(*request.method(), axum::http::Method::GET | axum::http::Method::HEAD);
    let not_json = writes && presented.header_token.is_none() && !is_json(text("content-type"));
    match state.guard.check(&presented) {
        Ok(Admitted::Token) if not_json => error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the Builder's API takes JSON: send `Content-Type: application/json`",
        ),
        Ok(Admitted::Token) => {
            let mut response = next.run(request).await;
            // Nothing of the Builder belongs in a cache or in another site's frame.
            let headers = response.headers_mut();
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            response
        }
        Ok(Admitted::TracesOnly) => {
            if request.method() == axum::http::Method::POST && request.uri().path() == "/api/traces" {
                next.run(request).await
            } else {
                error(
                    StatusCode::FORBIDDEN,
                    "the dev server's token may post traces, and do nothing else",
                )
            }
        }
        Ok(Admitted::TokenInUrl) => {
            // Keep the token in the cookie, and out of the address bar and the history.
            let mut response = StatusCode::SEE_OTHER.into_response();
            let headers = response.headers_mut();
            headers.insert(header::LOCATION, HeaderValue::from_static("/"));
            if let Ok(cookie) = HeaderValue::from_str(&state.guard.cookie()) {
                headers.insert(header::SET_COOKIE, cookie);
            }
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(refusal) => {
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::FORBIDDEN);
            error(status, refusal.message())
        }
    }
}

/// `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

fn error(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"status": status.as_u16(), "message": message}});
    (status, axum::Json(body)).into_response()
}

fn bad_request(message: impl std::fmt::Display) -> Response {
    error(StatusCode::BAD_REQUEST, &message.to_string())
}

fn failed(message: impl std::fmt::Display) -> Response {
    error(StatusCode::INTERNAL_SERVER_ERROR, &message.to_string())
}

async fn index() -> Response {
    serve_file("index.html")
}

async fn app_file(UrlPath(path): UrlPath<String>) -> Response {
    serve_file(&path)
}

fn serve_file(path: &str) -> Response {
    let Some(bytes) = super::app_file(path) else {
        return error(StatusCode::NOT_FOUND, "no such file in the Builder");
    };
    let content_type = match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    };
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Only the Builder's own files, scripts and styles run in it.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'"),
    );
    response
}

async fn project(Shared(state): SharedState) -> Response {
    let dir = state.dir.clone();
    match tokio::task::spawn_blocking(move || super::model::read(&dir)).await {
        Ok(model) => axum::Json(model).into_response(),
        Err(e) => failed(format!("reading the project failed: {e}")),
    }
}

async fn code(Shared(state): SharedState, UrlPath(route): UrlPath<String>) -> Response {
    let dir = state.dir.clone();
    match tokio::task::spawn_blocking(move || super::code::route_code(&dir, &route)).await {
        Ok(Ok(code)) => axum::Json(code).into_response(),
        Ok(Err(why)) => error(StatusCode::CONFLICT, &why),
        Err(e) => failed(format!("emitting failed: {e}")),
    }
}

/// `flows/<route>.layout.json`, for a route that exists (404 otherwise; 403 for a file
/// the Builder does not touch: [`files`]).
fn layout_file(state: &State, route: &str) -> Result<PathBuf, Refused> {
    flow_file(state, route)?;
    Ok(state.dir.join("flows").join(format!("{route}.layout.json")))
}

async fn layout(Shared(state): SharedState, UrlPath(route): UrlPath<String>) -> Response {
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
struct Positions {
    positions: serde_json::Map<String, Value>,
}

async fn save_layout(Shared(state): SharedState, UrlPath(route): UrlPath<String>, body: axum::body::Bytes) -> Response {
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

fn forbidden(refused: files::Refused) -> Response {
    error(StatusCode::FORBIDDEN, &refused.0)
}

/// A new route: `flows/<name>.yaml`, never over a file that exists.
async fn new_flow(Shared(state): SharedState, body: axum::body::Bytes) -> Response {
    use super::flow_ops::{NewRoute, new_flow_text};
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
            axum::Json(json!({ "name": new.name, "version": super::edit::version(text.as_bytes()), "text": text })),
        )
            .into_response(),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => error(
            StatusCode::CONFLICT,
            &format!("`flows/{}.yaml` exists already", new.name),
        ),
        Err(e) => failed(format!("cannot write `{}`: {e}", file.display())),
    }
}

async fn flow_text(Shared(state): SharedState, UrlPath(route): UrlPath<String>) -> Response {
    let file = match flow_file(&state, &route) {
        Ok(file) => file,
        Err(refused) => return refused.into_response(),
    };
    match files::read_text(&file, &format!("flows/{route}")) {
        Ok(Some(text)) => {
            axum::Json(json!({ "version": super::edit::version(text.as_bytes()), "text": text })).into_response()
        }
        Ok(None) => error(StatusCode::NOT_FOUND, "no flow of that name"),
        Err(refused) => forbidden(refused),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditBatch {
    /// The version the edits were made against.
    base: String,
    edits: Vec<super::edit::Edit>,
}

impl FlowRequest for EditBatch {
    const SHAPE: &'static str = "{\"base\": <version>, \"edits\": [{\"op\": \"set\", \"path\": […], \"value\": …}, …]}";
}

async fn edit_flow(FlowBody { file, request: batch, .. }: FlowBody<EditBatch>) -> Response {
    match super::edit::apply(&file, &batch.base, &batch.edits) {
        Ok((previous, text)) => written(&previous, &text),
        Err(refused) => refusal(refused),
    }
}

/// A node added, renamed or deleted, against the version the Builder read.
#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "lowercase", deny_unknown_fields)]
enum NodeAction {
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

async fn node_action(FlowBody { file, request: action, .. }: FlowBody<NodeAction>) -> Response {
    use super::flow_ops;
    let mut added = None;
    let result = match &action {
        NodeAction::Add {
            base,
            node_type,
            node,
            id,
        } => super::edit::apply_planned(&file, base, |flow| {
            let id = id
                .clone()
                .unwrap_or_else(|| flow_ops::fresh_id(flow, node_type, node.as_deref()));
            let edits = flow_ops::add_node(flow, &id, node_type, node.as_deref());
            added = Some(id);
            edits
        }),
        NodeAction::Rename { base, id, to } => {
            super::edit::apply_planned(&file, base, |flow| flow_ops::rename_node(flow, id, to))
        }
        NodeAction::Delete { base, id } => {
            super::edit::apply_planned(&file, base, |flow| flow_ops::delete_node(flow, id))
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
struct WireRequest {
    base: String,
    from: super::wiring::End,
    to: super::wiring::End,
    /// Only say whether the wire can be drawn (while it is being dragged).
    #[serde(default)]
    check: bool,
}

impl FlowRequest for WireRequest {
    const SHAPE: &'static str = "{\"base\", \"from\": {\"node\", \"pin\"}, \"to\": {\"node\", \"pin\"}}";
}

async fn wire(FlowBody { state, route, file, request }: FlowBody<WireRequest>) -> Response {
    let dir = state.dir.clone();
    let planned = {
        let (route, from, to) = (route.clone(), request.from.clone(), request.to.clone());
        tokio::task::spawn_blocking(move || super::wiring::plan(&dir, &route, &from, &to)).await
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
    match super::edit::apply(&file, &request.base, &edits) {
        Ok((previous, text)) => written(&previous, &text),
        Err(refused) => refusal(refused),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Restore {
    base: String,
    text: String,
}

impl FlowRequest for Restore {
    const SHAPE: &'static str = "{\"base\": <version>, \"text\": <the flow file>}";
}

/// Undo and redo: the Builder puts back a text the file had, against the version it
/// holds now, so a change made elsewhere meanwhile is never lost either.
async fn restore_flow(FlowBody { file, request, .. }: FlowBody<Restore>) -> Response {
    let Restore { base, text } = request;
    match super::edit::restore(&file, &base, &text) {
        Ok(()) => axum::Json(json!({ "version": super::edit::version(text.as_bytes()), "text": text })).into_response(),
        Err(refused) => refusal(refused),
    }
}

/// A request about one flow, and its JSON shape in words (for a refusal).
trait FlowRequest: serde::de::DeserializeOwned {
    const SHAPE: &'static str;
}

/// What a request about one flow brings its handler, read before the handler runs: the
/// Builder's state, the route named in the path, its flow file and the JSON body as `T`.
/// Refused (404 for a flow that does not exist, 400 naming `T::SHAPE`) otherwise.
struct FlowBody<T> {
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
        "version": super::edit::version(text.as_bytes()),
        "text": text,
        "previous": { "version": super::edit::version(previous.as_bytes()), "text": previous },
    })
}

fn written(previous: &str, text: &str) -> Response {
    axum::Json(written_json(previous, text)).into_response()
}

fn refusal(refused: super::edit::Refused) -> Response {
    use super::edit::Refused;
    match refused {
        Refused::Conflict { current } => {
            let body = json!({
                "error": {
                    "status": 409,
                    "message": "the flow file changed since the Builder read it (in a text editor, another tab or git); nothing was written: review it and make the edit again",
                },
                "current": { "version": super::edit::version(current.as_bytes()), "text": current },
            });
            (StatusCode::CONFLICT, axum::Json(body)).into_response()
        }
        Refused::Invalid(why) => error(StatusCode::UNPROCESSABLE_ENTITY, &why),
        Refused::Io(why) => failed(why),
    }
}

#[derive(Deserialize)]
struct OriginQuery {
    value: String,
}

/// One allowed origin, checked as `svc check` checks it: the Builder's form asks as the
/// user types.
async fn check_origin(axum::extract::Query(q): axum::extract::Query<OriginQuery>) -> Response {
    match crate::check::flow::allowed_origin_problem(&q.value) {
        None => axum::Json(json!({ "ok": true })).into_response(),
        Some((message, _, hint)) => {
            axum::Json(json!({ "ok": false, "message": message, "hint": hint })).into_response()
        }
    }
}

#[derive(Deserialize)]
struct SettingQuery {
    #[serde(rename = "type")]
    node_type: String,
    key: String,
    /// JSON: `60`, `"minute"`.
    value: String,
}

/// One setting of a built-in node, read as a flow reads it: the inspector's forms accept
/// what `svc check` accepts, and nothing else.
async fn check_setting(axum::extract::Query(q): axum::extract::Query<SettingQuery>) -> Response {
    let Ok(value) = serde_json::from_str::<Value>(&q.value) else {
        return bad_request("`value` is a JSON value: 60, \"1m\"");
    };
    match svc_frontend::flow::setting_problem(&q.node_type, &q.key, &value) {
        None => axum::Json(json!({ "ok": true })).into_response(),
        Some((message, hint)) => axum::Json(json!({ "ok": false, "message": message, "hint": hint })).into_response(),
    }
}

async fn list_keys(Shared(state): SharedState) -> Response {
    let store = match state.workspace.open_existing() {
        Ok(Ok(store)) => store,
        // No store yet: no keys.
        Ok(Err(_)) => return axum::Json(json!({ "keys": [], "store": state.workspace.describe() })).into_response(),
        Err(e) => return failed(e),
    };
    let now = svc_runtime::apikey::unix_now();
    match store.list_keys() {
        Ok(keys) => {
            let keys: Vec<Value> = keys.iter().map(|k| crate::keys::summary(k, now)).collect();
            axum::Json(json!({ "keys": keys, "store": state.workspace.describe() })).into_response()
        }
        Err(e) => failed(e),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewKey {
    name: String,
    owner: String,
    expires_in: Option<String>,
}

fn issued(issued: &crate::keys::Issued) -> Value {
    let now = svc_runtime::apikey::unix_now();
    json!({ "key": issued.key, "record": crate::keys::summary(&issued.record, now) })
}

/// A request refused: its status and why, answered as `{"error": …}` (a handler that
/// returns `Result<Response, Refused>` refuses with `?`).
struct Refused(StatusCode, String);

impl Refused {
    fn bad(why: impl std::fmt::Display) -> Refused {
        Refused(StatusCode::BAD_REQUEST, why.to_string())
    }

    fn failed(why: impl std::fmt::Display) -> Refused {
        Refused(StatusCode::INTERNAL_SERVER_ERROR, why.to_string())
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        error(self.0, &self.1)
    }
}

/// A duration a person typed (`30d`, `12h`), or none when the field was left empty.
fn optional_duration(text: Option<&str>) -> Result<Option<i64>, Refused> {
    let text = text.filter(|d| !d.trim().is_empty());
    text.map(crate::workspace::parse_duration).transpose().map_err(Refused::bad)
}

/// The workspace store, which must exist already (a key to revoke or rotate is in it).
fn existing_store(state: &State) -> Result<Arc<dyn svc_runtime::store::WorkspaceStore>, Refused> {
    match state.workspace.open_existing() {
        Ok(Ok(store)) => Ok(store),
        Ok(Err(why)) => Err(Refused(StatusCode::NOT_FOUND, why)),
        Err(e) => Err(Refused::failed(e)),
    }
}

/// A key's answer: 201 with the key shown once, or why there is none.
fn key_answer(made: Result<Value, crate::keys::KeyError>) -> Response {
    match made {
        Ok(body) => (StatusCode::CREATED, axum::Json(body)).into_response(),
        Err(crate::keys::KeyError::Store(e)) => failed(e),
        Err(e) => error(StatusCode::CONFLICT, &e.to_string()),
    }
}

async fn create_key(Shared(state): SharedState, body: axum::body::Bytes) -> Result<Response, Refused> {
    let new = serde_json::from_slice::<NewKey>(&body)
        .map_err(|_| Refused::bad("expected {\"name\": …, \"owner\": …, \"expiresIn\": \"30d\" (optional)}"))?;
    let lifetime = optional_duration(new.expires_in.as_deref())?;
    let store = state.workspace.open().map_err(Refused::failed)?;
    let made = crate::keys::create(store.as_ref(), new.name.trim(), new.owner.trim(), lifetime);
    Ok(key_answer(made.map(|new| issued(&new))))
}

async fn revoke_key(Shared(state): SharedState, UrlPath(id): UrlPath<String>) -> Result<Response, Refused> {
    let store = existing_store(&state)?;
    let record = crate::keys::revoke(store.as_ref(), &id).map_err(|e| Refused(StatusCode::NOT_FOUND, e.to_string()))?;
    Ok(axum::Json(crate::keys::summary(&record, svc_runtime::apikey::unix_now())).into_response())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Rotate {
    grace: Option<String>,
}

async fn rotate_key(
    Shared(state): SharedState,
    UrlPath(id): UrlPath<String>,
    body: axum::body::Bytes,
) -> Result<Response, Refused> {
    let rotate: Rotate = if body.is_empty() {
        Rotate::default()
    } else {
        serde_json::from_slice(&body).map_err(|_| Refused::bad("expected {\"grace\": \"1h\"} (optional)"))?
    };
    let grace = optional_duration(rotate.grace.as_deref())?;
    let store = existing_store(&state)?;
    let rotated = crate::keys::rotate(store.as_ref(), &id, grace, None).map(|rotation| {
        let mut body = issued(&rotation.issued);
        body["oldKey"] = json!(rotation.old.id);
        match rotation.retired {
            Ok(until) => body["oldKeyUntil"] = json!(until),
            Err(e) => body["warning"] = json!(format!("the old key could not be retired ({e}); revoke it")),
        }
        body
    });
    Ok(key_answer(rotated))
}

/// The secrets the project declares, in its config (YAML or TypeScript).
fn declared_secrets(state: &State) -> Vec<svc_types::assets::SecretDefinition> {
    state.config()
        .map(|c| c.assets.secrets)
        .unwrap_or_default()
}

async fn list_secrets(Shared(state): SharedState) -> Response {
    let declared = declared_secrets(&state);
    let set = match state.workspace.open_existing() {
        Ok(Ok(store)) => match store.list_secrets() {
            Ok(set) => set,
            Err(e) => return failed(e),
        },
        Ok(Err(_)) => Vec::new(),
        Err(e) => return failed(e),
    };
    let rows: Vec<Value> = declared
        .iter()
        .map(|d| {
            let stored = set.iter().find(|s| s.name == d.name);
            json!({
                "name": d.name,
                "required": d.required,
                "description": d.description,
                "set": stored.is_some(),
                "updatedAt": stored.map(|s| s.updated_at),
            })
        })
        .collect();
    axum::Json(json!({ "secrets": rows, "store": state.workspace.describe() })).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretValue {
    value: String,
}

async fn set_secret(Shared(state): SharedState, UrlPath(name): UrlPath<String>, body: axum::body::Bytes) -> Response {
    let Ok(SecretValue { value }) = serde_json::from_slice::<SecretValue>(&body) else {
        return bad_request("expected {\"value\": …}");
    };
    if value.is_empty() {
        return bad_request("the value is empty; nothing was set");
    }
    if !declared_secrets(&state).iter().any(|d| d.name == name) {
        return error(
            StatusCode::NOT_FOUND,
            "the project declares no secret of that name (declare it in the config first)",
        );
    }
    let result = (|| -> Result<(), String> {
        let store = state.workspace.open()?;
        let (key, _) = state.workspace.require_secrets_key(true)?;
        svc_runtime::secrets::prepare_store(store.as_ref(), &key)?;
        store
            .set_secret(&name, &key.seal(&name, &value), svc_runtime::apikey::unix_now())
            .map_err(|e| e.to_string())
    })();
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => failed(e),
    }
}

/// `?after=N`: the dev loop's report after number N, waiting up to [`TRACE_WAIT`] for it;
/// without it, the current one. `{"live": false}` under `svc studio`.
async fn dev_status(
    Shared(state): SharedState,
    axum::extract::Query(After { after }): axum::extract::Query<After>,
) -> Response {
    let Some(mut status) = state.dev_status.clone() else {
        return axum::Json(json!({ "live": false })).into_response();
    };
    if let Some(after) = after.and_then(|a| u64::try_from(a).ok()) {
        let newer = status.wait_for(|s| s.generation > after);
        // A timeout answers with the same report; the page asks again.
        let _ = tokio::time::timeout(TRACE_WAIT, newer).await;
    }
    let now = status.borrow().clone();
    let mut answer = serde_json::to_value(now).unwrap_or_default();
    answer["live"] = json!(true);
    axum::Json(answer).into_response()
}

/// How long `GET /api/traces` waits for a new request before answering with none.
const TRACE_WAIT: Duration = Duration::from_secs(10);

/// `?after=N`: the traces after number N, waiting for one when there is none yet
/// (`after=-1`: any). Without it: every trace kept, at once.
#[derive(Deserialize)]
struct After {
    after: Option<i64>,
}

async fn traces(
    Shared(state): SharedState,
    axum::extract::Query(After { after }): axum::extract::Query<After>,
) -> Response {
    let since = after.and_then(|a| u64::try_from(a).ok());
    // Listening before looking, so that a trace arriving in between is not missed.
    let arrival = state.traces.arrivals().notified();
    tokio::pin!(arrival);
    arrival.as_mut().enable();
    let mut found = state.traces.since(since);
    if found.is_empty() && after.is_some() && state.server.is_some() {
        let _ = tokio::time::timeout(TRACE_WAIT, arrival).await;
        found = state.traces.since(since);
    }
    axum::Json(json!({ "live": state.server.is_some(), "traces": found })).into_response()
}

async fn add_trace(Shared(state): SharedState, body: axum::body::Bytes) -> Response {
    let Ok(trace) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("expected a trace");
    };
    let places = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || state.key_places())
            .await
            .unwrap_or_default()
    };
    let seq = state.traces.add(trace, &places);
    axum::Json(json!({ "seq": seq })).into_response()
}

/// Headers a replay does not copy: the connection's own, set again by the client.
/// The dev server's URL for a traced request's path and query; `None` when the path is
/// not a path of that server.
fn replay_url(server: &str, path: Option<&str>, query: Option<&str>) -> Option<reqwest::Url> {
    let base = reqwest::Url::parse(server).ok()?;
    let path = path?;
    if !path.starts_with('/') || path.starts_with("//") || path.contains(['\\', '#']) {
        return None;
    }
    let mut url = base.clone();
    url.set_path(path);
    url.set_query(query);
    (url.origin() == base.origin()).then_some(url)
}

const NOT_REPLAYED: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "keep-alive",
    "x-request-id",
];

async fn replay(Shared(state): SharedState, UrlPath(seq): UrlPath<u64>) -> Response {
    let Some(server) = &state.server else {
        return error(
            StatusCode::CONFLICT,
            "no server runs here: replay works under `svc dev`",
        );
    };
    let Some(raw) = state.traces.raw(seq) else {
        return error(StatusCode::NOT_FOUND, "no such request (the oldest are dropped)");
    };
    if raw["body"]["cut"] == true {
        return error(
            StatusCode::CONFLICT,
            "the request's body was too large to keep; send it again yourself",
        );
    }
    let method = raw["method"]
        .as_str()
        .and_then(|m| m.parse::<reqwest::Method>().ok())
        .unwrap_or(reqwest::Method::GET);
    // Only to the dev server, whatever the trace says: its path must be a path (`/…`,
    // not `//host/…` nor `@host/…`), and the URL is built by the URL parser and checked
    // to have the server's origin, so the credentials it carries go back where they came
    // from and nowhere else.
    let Some(url) = replay_url(server, raw["path"].as_str(), raw["query"].as_str()) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "this request's path is not one the dev server could have received; it is not sent",
        );
    };
    let Ok(client) = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
    else {
        return failed("cannot make an HTTP client");
    };
    let mut request = client.request(method, url);
    for pair in raw["headers"].as_array().into_iter().flatten() {
        let (Some(name), Some(value)) = (pair[0].as_str(), pair[1].as_str()) else {
            continue;
        };
        if !NOT_REPLAYED.contains(&name.to_ascii_lowercase().as_str()) {
            request = request.header(name, value);
        }
    }
    if let Some(text) = raw["body"]["text"].as_str() {
        request = request.body(text.to_string());
    }
    match request.send().await {
        Ok(response) => axum::Json(json!({ "status": response.status().as_u16() })).into_response(),
        Err(e) => error(StatusCode::BAD_GATEWAY, &format!("the dev server did not answer: {e}")),
    }
}

#[cfg(test)]
mod replay_tests {
    #[test]
    fn a_replay_goes_to_the_dev_server_only() {
        let server = "http://127.0.0.1:8080";
        let url = |path: &str, query: Option<&str>| super::replay_url(server, Some(path), query).map(|u| u.to_string());
        assert_eq!(url("/a/b", Some("x=1")).as_deref(), Some("http://127.0.0.1:8080/a/b?x=1"));
        for hostile in ["@127.0.0.1:19999/internal", "//evil.example/x", "evil.example/x", "/\\evil", "/a#b", ""] {
            assert_eq!(url(hostile, None), None, "{hostile}");
        }
        // A query cannot move it either.
        let moved = url("/a", Some("x=1#@evil.example")).unwrap();
        assert!(moved.starts_with("http://127.0.0.1:8080/a?"), "{moved}");
    }
}
