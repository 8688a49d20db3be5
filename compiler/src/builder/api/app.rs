//! The web app's files (`builder/app/`, embedded by `compiler/build.rs`), served as written.

use super::error;
use axum::body::Body;
use axum::extract::Path as UrlPath;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/builder_app.rs"));
}

/// The embedded file of the web app at `path` (`index.html`, `src/canvas.js`).
fn embedded_file(path: &str) -> Option<&'static [u8]> {
    embedded::APP.iter().find(|(p, _)| *p == path).map(|(_, bytes)| *bytes)
}

pub(super) async fn index() -> Response {
    serve_file("index.html")
}

pub(super) async fn app_file(UrlPath(path): UrlPath<String>) -> Response {
    serve_file(&path)
}

fn serve_file(path: &str) -> Response {
    let Some(bytes) = embedded_file(path) else {
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
