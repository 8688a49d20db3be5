//! Routes across flows: no two flows may serve the same method on the same path, and
//! the paths must be registrable together. Conflicts are found by inserting every path
//! into `matchit`, the router axum uses, so a project the checker accepts is one the
//! generated server can register without panicking at start-up.

use std::collections::BTreeMap;
use svc_frontend::flow::{Flow, Method};
use svc_frontend::{Code, Diagnostic, Diagnostics};

/// `orders/{id}` → `orders/{}`: paths that differ only in parameter names are the same route.
pub fn normalized(route: &str) -> String {
    route
        .split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

pub fn check(flows: &[Flow], diags: &mut Diagnostics) {
    let mut by_method: BTreeMap<(String, Method), &Flow> = BTreeMap::new();
    let mut router = matchit::Router::<usize>::new();
    let mut registered: BTreeMap<String, usize> = BTreeMap::new();
    for (i, flow) in flows.iter().enumerate() {
        let key_path = normalized(&flow.route.value);
        for m in &flow.methods {
            if let Some(first) = by_method.get(&(key_path.clone(), m.value)) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateRoute,
                        m.span,
                        format!("{} /{} is served by two flows", m.value.as_str(), flow.route.value),
                    )
                    .label("second definition")
                    .with_secondary(first.route.span, "first defined here")
                    .help("each method of a path is served by one flow; remove the method from one of them"),
                );
            } else {
                by_method.insert((key_path.clone(), m.value), flow);
            }
        }
        if registered.contains_key(&flow.route.value) {
            continue;
        }
        match router.insert(format!("/{}", flow.route.value), i) {
            Ok(()) => {
                registered.insert(flow.route.value.clone(), i);
            }
            Err(matchit::InsertError::Conflict { with }) => {
                let with = with.trim_start_matches('/');
                let other = flows.iter().find(|f| f.route.value == with);
                if other.is_some_and(|o| normalized(&o.route.value) == key_path) {
                    // Same path with other parameter names: only a problem if methods overlap,
                    // which was reported above; still, the router needs one spelling.
                    let mut d = Diagnostic::new(
                        Code::DuplicateRoute,
                        flow.route.span,
                        format!(
                            "route `{}` names its parameters differently from `{with}`",
                            flow.route.value
                        ),
                    )
                    .label("same path, other parameter names")
                    .help("flows that share a path must use the same parameter names");
                    if let Some(o) = other {
                        d = d.with_secondary(o.route.span, "the other spelling");
                    }
                    diags.push(d);
                } else {
                    let mut d = Diagnostic::new(
                        Code::DuplicateRoute,
                        flow.route.span,
                        format!("route `{}` conflicts with `{with}`", flow.route.value),
                    )
                    .label("ambiguous route")
                    .help("a request path must select one route; make the two paths differ in a fixed segment");
                    if let Some(o) = other {
                        d = d.with_secondary(o.route.span, "conflicting route");
                    }
                    diags.push(d);
                }
            }
            Err(e) => diags.push(
                Diagnostic::new(
                    Code::InvalidRoute,
                    flow.route.span,
                    format!("route `{}` cannot be served: {e}", flow.route.value),
                )
                .label("invalid route")
                .help("simplify the path"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_parameters() {
        assert_eq!(normalized("orders/{id}/lines/{line}"), "orders/{}/lines/{}");
    }
}
