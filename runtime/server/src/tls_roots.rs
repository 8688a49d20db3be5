//! The certificate authorities a shared store's TLS connection trusts.
//!
//! By default both shared stores (`rediss://…` and `postgres://…?sslmode=require`) verify
//! the server's certificate against the Mozilla roots. Managed databases and caches often
//! present a certificate of their own CA (Amazon RDS, a company's internal CA), so a
//! store URL may name a PEM file of the CAs to trust instead, with libpq's parameter:
//! `?sslrootcert=/etc/ssl/db-ca.pem`. The parameter is taken out of the URL here, before
//! the client library reads it (neither library knows it).

/// A CA file named by a store URL.
#[derive(Debug, Clone)]
pub struct RootCert {
    /// The path as written in the URL, for messages.
    pub path: String,
    /// The file's content (PEM).
    pub pem: Vec<u8>,
}

/// `url` without the query parameter `name`, and that parameter's value (decoded; the
/// last one when it is given twice).
pub fn take_param(url: &str, name: &str) -> (String, Option<String>) {
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let Some((base, query)) = before_fragment.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut kept = Vec::new();
    let mut value = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some((key, v)) if key == name => {
                value = Some(percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned())
            }
            _ => kept.push(pair),
        }
    }
    if value.is_none() {
        return (url.to_string(), None);
    }
    let mut rest = base.to_string();
    if !kept.is_empty() {
        rest.push('?');
        rest.push_str(&kept.join("&"));
    }
    if let Some(f) = fragment {
        rest.push('#');
        rest.push_str(f);
    }
    (rest, value)
}

/// `url` without its `sslrootcert` parameter, and the file that parameter names (read).
/// Fails on a file that cannot be read or holds no PEM certificate.
pub fn take_root_cert(url: &str) -> Result<(String, Option<RootCert>), String> {
    let (rest, path) = take_param(url, "sslrootcert");
    let Some(path) = path else {
        return Ok((rest, None));
    };
    let pem = std::fs::read(&path).map_err(|e| format!("sslrootcert `{path}`: {e}"))?;
    if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
        return Err(format!(
            "sslrootcert `{path}`: no PEM certificate (-----BEGIN CERTIFICATE-----) in the file"
        ));
    }
    Ok((rest, Some(RootCert { path, pem })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameter_is_taken_out_and_the_rest_kept() {
        let dir = std::env::temp_dir().join(format!("svc-tls-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").unwrap();
        let ca = ca.display().to_string();

        let (url, root) = take_root_cert(&format!("postgres://u@h/db?sslmode=require&sslrootcert={ca}")).unwrap();
        assert_eq!(url, "postgres://u@h/db?sslmode=require");
        assert_eq!(root.unwrap().path, ca);
        let (url, root) = take_root_cert(&format!(
            "rediss://h:1/?sslrootcert={}#insecure",
            ca.replace('/', "%2F")
        ))
        .unwrap();
        assert_eq!(url, "rediss://h:1/#insecure");
        assert!(root.is_some());
        let (url, root) = take_root_cert("redis://h:1/?protocol=resp3").unwrap();
        assert_eq!(url, "redis://h:1/?protocol=resp3");
        assert!(root.is_none());

        let missing = take_root_cert("postgres://h/db?sslrootcert=/nonexistent/ca.pem").unwrap_err();
        assert!(missing.contains("/nonexistent/ca.pem"), "{missing}");
        std::fs::write(dir.join("junk.pem"), "not a certificate").unwrap();
        let junk = take_root_cert(&format!(
            "postgres://h/db?sslrootcert={}",
            dir.join("junk.pem").display()
        ))
        .unwrap_err();
        assert!(junk.contains("no PEM certificate"), "{junk}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
