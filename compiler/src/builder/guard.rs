//! Who may use the Builder. It can create API keys and set secrets, so every request must
//! come from the person who started it, through the address it printed:
//!
//! - **The token.** A random token is part of the printed URL. Opening that URL sets it as
//!   a cookie (`HttpOnly`, `SameSite=Strict`) and redirects to the bare address, so the
//!   token leaves the address bar; every other request must carry the cookie (or the
//!   `x-svc-token` header, for scripts). Compared in constant time.
//! - **The `Host` header** must name this server by an IP address or `localhost`, with its
//!   port: a page of another site whose name was rebound to 127.0.0.1 (DNS rebinding)
//!   sends its own name and is refused.
//! - **The `Origin` header**, when present, must be this server's own origin, and a
//!   browser's `Sec-Fetch-Site` must not say `cross-site` or `same-site`: another page
//!   cannot make the browser act for it (CSRF), even with the cookie.
//! - **The dev server's token** is another one, which admits `POST /api/traces` and
//!   nothing else: the dev server runs the project's nodes, and a node must not be able
//!   to use the Builder (create keys, set secrets, rewrite flows) with what its server
//!   was given.

use subtle::ConstantTimeEq;

/// The cookie that carries the token.
pub const COOKIE: &str = "svc_builder";
/// The header that may carry it instead (scripts, tests).
pub const HEADER: &str = "x-svc-token";

pub struct Guard {
    token: String,
    /// The dev server's: it may post traces, nothing else.
    traces_token: String,
    port: u16,
}

/// Why a request is refused, with the status to answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 403: the `Host` is not this server (DNS rebinding).
    ForeignHost,
    /// 403: another site's page sent it (CSRF).
    ForeignOrigin,
    /// 401: no token, or a wrong one.
    NoToken,
}

impl Refusal {
    pub fn status(&self) -> u16 {
        match self {
            Refusal::ForeignHost | Refusal::ForeignOrigin => 403,
            Refusal::NoToken => 401,
        }
    }

    pub fn message(&self) -> &'static str {
        match self {
            Refusal::ForeignHost => {
                "this Builder answers only at the address svc printed (the Host header names another)"
            }
            Refusal::ForeignOrigin => "requests from another site's pages are refused",
            Refusal::NoToken => "open the Builder with the URL svc printed: it carries the access token",
        }
    }
}

/// What a request presents, taken from its headers and query.
pub struct Presented<'a> {
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub fetch_site: Option<&'a str>,
    pub cookie: Option<&'a str>,
    pub header_token: Option<&'a str>,
    pub query_token: Option<&'a str>,
}

/// How a request may go on.
#[derive(Debug, PartialEq, Eq)]
pub enum Admitted {
    /// With the token from the cookie or the header.
    Token,
    /// With the token from the URL: set the cookie, and send the browser to the bare URL.
    TokenInUrl,
    /// With the dev server's token (in the header): only to post a trace.
    TracesOnly,
}

impl Guard {
    /// A guard with a new random token, for a server listening on `port`.
    pub fn new(port: u16) -> Guard {
        Guard {
            token: random_token(),
            traces_token: random_token(),
            port,
        }
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// The token that may post traces and do nothing else (the dev server's).
    pub fn traces_token(&self) -> &str {
        &self.traces_token
    }

    pub fn check(&self, request: &Presented<'_>) -> Result<Admitted, Refusal> {
        let host = request.host.ok_or(Refusal::ForeignHost)?;
        if !self.is_own_host(host) {
            return Err(Refusal::ForeignHost);
        }
        if let Some(origin) = request.origin
            && origin != format!("http://{host}")
        {
            return Err(Refusal::ForeignOrigin);
        }
        if matches!(request.fetch_site, Some("cross-site" | "same-site")) {
            return Err(Refusal::ForeignOrigin);
        }
        let cookie = request.cookie.and_then(cookie_value);
        if [cookie, request.header_token]
            .into_iter()
            .flatten()
            .any(|t| self.matches(t))
        {
            return Ok(Admitted::Token);
        }
        if request.query_token.is_some_and(|t| self.matches(t)) {
            return Ok(Admitted::TokenInUrl);
        }
        if request.header_token.is_some_and(|t| same(t, &self.traces_token)) {
            return Ok(Admitted::TracesOnly);
        }
        Err(Refusal::NoToken)
    }

    /// The `Set-Cookie` value that carries the token.
    pub fn cookie(&self) -> String {
        format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", self.token)
    }

    fn matches(&self, presented: &str) -> bool {
        same(presented, &self.token)
    }

    /// `127.0.0.1:4400`, `[::1]:4400`, `192.168.1.20:4400` (when listening on every
    /// interface) or `localhost:4400`: a name that no other site can rebind.
    fn is_own_host(&self, host: &str) -> bool {
        let Some((name, port)) = host.rsplit_once(':') else {
            return false;
        };
        if port.parse::<u16>() != Ok(self.port) {
            return false;
        }
        let name = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name);
        name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
    }
}

/// Compared in constant time.
fn same(presented: &str, token: &str) -> bool {
    presented.len() == token.len() && bool::from(presented.as_bytes().ct_eq(token.as_bytes()))
}

fn random_token() -> String {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The token in a `Cookie` header (`a=1; svc_builder=…; b=2`).
fn cookie_value(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|part| part.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(host: &'a str, cookie: Option<&'a str>) -> Presented<'a> {
        Presented {
            host: Some(host),
            origin: None,
            fetch_site: None,
            cookie,
            header_token: None,
            query_token: None,
        }
    }

    #[test]
    fn the_token_admits_through_the_printed_address_only() {
        let guard = Guard::new(4400);
        let cookie = format!("a=1; {COOKIE}={}", guard.token());
        let check = |host: &str, cookie: Option<&str>| guard.check(&request(host, cookie));
        assert_eq!(check("127.0.0.1:4400", Some(&cookie)), Ok(Admitted::Token));
        assert_eq!(check("localhost:4400", Some(&cookie)), Ok(Admitted::Token));
        assert_eq!(check("[::1]:4400", Some(&cookie)), Ok(Admitted::Token));
        // DNS rebinding: the page's own name, or another port.
        assert_eq!(check("evil.example:4400", Some(&cookie)), Err(Refusal::ForeignHost));
        assert_eq!(check("127.0.0.1:80", Some(&cookie)), Err(Refusal::ForeignHost));
        // No token, a wrong one, one of another length.
        assert_eq!(check("127.0.0.1:4400", None), Err(Refusal::NoToken));
        let wrong = format!("{COOKIE}={}", "0".repeat(48));
        assert_eq!(check("127.0.0.1:4400", Some(&wrong)), Err(Refusal::NoToken));
        assert_eq!(check("127.0.0.1:4400", Some("svc_builder=x")), Err(Refusal::NoToken));
        // The token in the URL.
        let mut with_query = request("127.0.0.1:4400", None);
        with_query.query_token = Some(guard.token());
        assert_eq!(guard.check(&with_query), Ok(Admitted::TokenInUrl));
        // The dev server's token admits it as the dev server only, and only in the header.
        let mut traces = request("127.0.0.1:4400", None);
        traces.header_token = Some(guard.traces_token());
        assert_eq!(guard.check(&traces), Ok(Admitted::TracesOnly));
        assert_ne!(guard.traces_token(), guard.token());
        let cookie = format!("{COOKIE}={}", guard.traces_token());
        assert_eq!(check("127.0.0.1:4400", Some(&cookie)), Err(Refusal::NoToken));
        let mut in_url = request("127.0.0.1:4400", None);
        in_url.query_token = Some(guard.traces_token());
        assert_eq!(guard.check(&in_url), Err(Refusal::NoToken));
    }

    #[test]
    fn another_sites_pages_are_refused_even_with_the_cookie() {
        let guard = Guard::new(4400);
        let cookie = format!("{COOKIE}={}", guard.token());
        let mut r = request("127.0.0.1:4400", Some(&cookie));
        r.origin = Some("https://evil.example");
        assert_eq!(guard.check(&r), Err(Refusal::ForeignOrigin));
        r.origin = Some("http://127.0.0.1:4400");
        assert_eq!(guard.check(&r), Ok(Admitted::Token));
        r.fetch_site = Some("cross-site");
        assert_eq!(guard.check(&r), Err(Refusal::ForeignOrigin));
        r.fetch_site = Some("same-origin");
        assert_eq!(guard.check(&r), Ok(Admitted::Token));
    }
}
