//! Outbound HTTP for nodes (spec §4.3, point 5): the runtime side of `ctx.fetch`.
//!
//! TLS through rustls. Limits by default: 10 s per request, 10 MiB per response body, 5
//! redirects; a node may ask for less or more, up to 60 s and 100 MiB. Only `http` and
//! `https` URLs.

use std::sync::OnceLock;
use std::time::Duration;
use svc_sdk::fetch::{FetchError, Headers, Request, Response};

#[derive(Debug, Clone, Copy)]
pub struct FetchLimits {
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    pub default_max_bytes: usize,
    pub max_bytes: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            default_timeout: Duration::from_secs(10),
            max_timeout: Duration::from_secs(60),
            default_max_bytes: 10 * 1024 * 1024,
            max_bytes: 100 * 1024 * 1024,
        }
    }
}

/// The HTTP client nodes fetch through.
///
/// The client (its TLS configuration and root certificates) is built on the first fetch,
/// not at start-up: most routes never fetch, and building it costs start-up time and
/// memory that would stay resident for nothing.
#[derive(Clone)]
pub struct Fetcher {
    client: OnceLock<reqwest::Client>,
    limits: FetchLimits,
}

impl Fetcher {
    pub fn new(limits: FetchLimits) -> Self {
        Fetcher {
            client: OnceLock::new(),
            limits,
        }
    }

    fn client(&self) -> &reqwest::Client {
        self.client.get_or_init(|| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::limited(5))
                .user_agent(concat!("svc-runtime/", env!("CARGO_PKG_VERSION")))
                .build()
                .expect("the HTTP client configuration is valid")
        })
    }

    pub async fn fetch(&self, request: Request) -> Result<Response, FetchError> {
        if let Some(problem) = request.invalid {
            return Err(FetchError::InvalidRequest(problem));
        }
        let url = url::Url::parse(&request.url)
            .map_err(|e| FetchError::InvalidRequest(format!("`{}` is not a URL: {e}", request.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::InvalidRequest(format!(
                "only http and https URLs can be fetched, not `{}`",
                url.scheme()
            )));
        }
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|_| FetchError::InvalidRequest(format!("`{}` is not an HTTP method", request.method)))?;
        let timeout = request
            .timeout
            .unwrap_or(self.limits.default_timeout)
            .min(self.limits.max_timeout);
        let max_bytes = request
            .max_response_bytes
            .unwrap_or(self.limits.default_max_bytes)
            .min(self.limits.max_bytes);
        let mut builder = self.client().request(method, url).timeout(timeout);
        for (name, value) in request.headers.iter() {
            builder = builder.header(name, value);
        }
        if let Some(body) = request.body {
            builder = builder.body(body);
        }
        let map_error = |e: reqwest::Error| {
            if e.is_timeout() {
                FetchError::Timeout(timeout)
            } else {
                FetchError::Network(without_url(&e))
            }
        };
        let mut response = builder.send().await.map_err(map_error)?;
        if response.content_length().is_some_and(|n| n as usize > max_bytes) {
            return Err(FetchError::TooLarge { limit: max_bytes });
        }
        let status = response.status().as_u16();
        let final_url = response.url().to_string();
        let mut headers = Headers::new();
        for (name, value) in response.headers() {
            if let Ok(v) = value.to_str() {
                headers.append(name.as_str(), v);
            }
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(map_error)? {
            if body.len() + chunk.len() > max_bytes {
                return Err(FetchError::TooLarge { limit: max_bytes });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Response::new(status, headers, final_url, body))
    }
}

/// reqwest errors include the URL, whose query may carry credentials: keep the cause only.
fn without_url(e: &reqwest::Error) -> String {
    crate::error::with_causes(e.without_url_ref(), e)
}

trait WithoutUrl {
    fn without_url_ref(&self) -> String;
}

impl WithoutUrl for reqwest::Error {
    fn without_url_ref(&self) -> String {
        if self.is_connect() {
            "could not connect".into()
        } else if self.is_redirect() {
            "too many redirects".into()
        } else if self.is_body() || self.is_decode() {
            "the response body could not be read".into()
        } else if self.is_request() {
            "the request could not be sent".into()
        } else {
            "the request failed".into()
        }
    }
}
