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
//! One module per resource: [`app`] (the page), [`project`] (the model, the code, checks
//! of a value as the user types), [`flows`] (flow files and layouts), [`keys`],
//! [`secrets`], [`dev`] (what `svc dev` does, traces and replay). This module holds the
//! state they share, the router and the guard in front of it.
//!
//! Errors are `{"error": {"status": …, "message": …}}`. No answer holds a secret value,
//! an API key other than one just issued, or a key hash.

use super::files;
use super::guard::{self, Admitted, Guard, Presented};
use super::traces::{KeyPlaces, Traces};
use crate::workspace::Workspace;
use axum::Router;
use axum::extract::{Request, State as Shared};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod app;
mod dev;
mod flows;
mod keys;
mod project;
mod secrets;

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
        .route("/", get(app::index))
        .route("/app/{*path}", get(app::app_file))
        .route("/api/project", get(project::project))
        .route("/api/project/revision", get(project::revision))
        .route("/api/code/{route}", get(project::code))
        .route("/api/check/origin", get(project::check_origin))
        .route("/api/check/setting", get(project::check_setting))
        .route("/api/layout/{route}", get(flows::layout).put(flows::save_layout))
        .route("/api/flows", post(flows::new_flow))
        .route("/api/flows/{route}", get(flows::flow_text).put(flows::restore_flow))
        .route("/api/flows/{route}/edit", post(flows::edit_flow))
        .route("/api/flows/{route}/node", post(flows::node_action))
        .route("/api/flows/{route}/wire", post(flows::wire))
        .route("/api/keys", get(keys::list_keys).post(keys::create_key))
        .route("/api/keys/{id}/revoke", post(keys::revoke_key))
        .route("/api/keys/{id}/rotate", post(keys::rotate_key))
        .route("/api/secrets", get(secrets::list_secrets))
        .route("/api/secrets/{name}", put(secrets::set_secret))
        .route("/api/dev", get(dev::dev_status))
        .route("/api/traces", get(dev::traces).post(dev::add_trace))
        .route("/api/traces/{seq}/replay", post(dev::replay))
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

fn forbidden(refused: files::Refused) -> Response {
    error(StatusCode::FORBIDDEN, &refused.0)
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
