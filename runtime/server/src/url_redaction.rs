//! What a server may show of a store URL (`/healthz --health-details`, logs, start-up
//! errors): the scheme, the hosts and a plain database path, never a credential.
//!
//! The clients do not agree on where credentials end. The `url` crate (redis) takes the
//! user information up to the last `@` of the authority, which ends at the first `/`, `?`
//! or `#`; tokio-postgres takes everything up to the first `@` of the whole rest, so
//! `postgres://svc:ab/cd@db/svc` connects with the password `ab/cd`. A random base64
//! password holds a `/` about 40 % of the time. So this reads conservatively: everything up
//! to the **last** `@` anywhere is credentials, and nothing of the query is shown
//! (`?password=…` is a credential too).

/// `postgres://svc:s3cret@db:5432/svc?sslmode=require` → `postgres://***@db:5432/svc`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<unparsable URL>".into();
    };
    if !scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) {
        return "<unparsable URL>".into();
    }
    let (credentials, after) = match rest.rfind('@') {
        Some(at) => ("***@", &rest[at + 1..]),
        None => ("", rest),
    };
    let hosts_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (hosts, tail) = after.split_at(hosts_end);
    // A host never holds these; if one does, the split above went wrong: show nothing.
    if !hosts
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-.:,[]%_".contains(&b))
    {
        return format!("{scheme}://{credentials}<host hidden>");
    }
    let path = tail.split(['?', '#']).next().unwrap_or_default();
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"/-._".contains(&b);
    let path = if path.bytes().all(plain) {
        path
    } else {
        "/<path hidden>"
    };
    format!("{scheme}://{credentials}{hosts}{path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn urls_lose_their_credentials_and_queries() {
        for (url, shown) in [
            ("redis://:hunter2@cache:6379/0", "redis://***@cache:6379/0"),
            ("rediss://u:p@h", "rediss://***@h"),
            ("redis://h:1", "redis://h:1"),
            ("::hunter2::", "<unparsable URL>"),
            ("redis+cluster://u:s3cret@a:1,b:2/?x=1", "redis+cluster://***@a:1,b:2/"),
            ("postgres://svc:pw@db/svc?sslmode=require", "postgres://***@db/svc"),
            ("postgres://[::1]:5432/svc", "postgres://[::1]:5432/svc"),
            // tokio-postgres reads `ab/cd` as the password: hidden whole.
            ("postgres://svc:ab/cd@db/svc", "postgres://***@db/svc"),
            ("redis://u:a@b:c@host:1", "redis://***@host:1"),
            ("postgres://db/svc?password=hunter2", "postgres://db/svc"),
            ("postgres://svc@db/svc?password=a%40b", "postgres://***@db/svc"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
        // An `@` in the query moves the cut into it: nothing of it is shown.
        assert!(!redact_url("postgres://db/svc?sslrootcert=/a@b&password=hunter2").contains("hunter2"));
    }

    /// A character of a generated password: anything a URL may carry, escaped or not.
    fn password() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[A-Za-z0-9]{1,4}",
            Just("/".to_string()),
            Just("@".to_string()),
            Just(":".to_string()),
            Just("?".to_string()),
            Just("#".to_string()),
            Just("&".to_string()),
            Just("=".to_string()),
            Just("+".to_string()),
            "%[0-9A-F]{2}",
        ];
        proptest::collection::vec(piece, 1..8).prop_map(|p| format!("PW{}", p.concat()))
    }

    proptest! {
        /// Whatever the password holds, and wherever the URL carries it (user
        /// information, `?password=`, both), no part of it of two or more characters that
        /// starts with its marker is shown.
        #[test]
        fn no_generated_password_is_ever_shown(
            scheme in prop_oneof![Just("postgres"), Just("postgresql"), Just("redis"), Just("rediss"), Just("redis+cluster")],
            user in "[a-z]{0,6}",
            pass in password(),
            host in "[a-z]{1,8}(\\.[a-z]{1,5})?(:[0-9]{2,5})?",
            path in "(/[a-z0-9]{0,6})?",
            in_query in any::<bool>(),
            in_userinfo in any::<bool>(),
            other in "[a-z]{1,5}=[a-z0-9@/]{0,6}",
        ) {
            let userinfo = if in_userinfo { format!("{user}:{pass}@") } else if user.is_empty() { String::new() } else { format!("{user}@") };
            let query = if in_query { format!("?{other}&password={pass}") } else { format!("?{other}") };
            let url = format!("{scheme}://{userinfo}{host}{path}{query}");
            let shown = redact_url(&url);
            prop_assert!(!shown.contains("PW"), "{url} was shown as {shown}");
            prop_assert!(!shown.contains(&pass), "{url} was shown as {shown}");
        }
    }
}
