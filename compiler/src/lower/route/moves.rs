//! Moving a value into the node that reads it last, instead of cloning it.
//!
//! A wire fills a node's input with an owned value. Cloning is always correct; moving is
//! what a hand-written handler does, and it is cheaper: cloning a request body of a few
//! lines costs more than parsing half of it. A wire's value is moved when all of these
//! hold:
//!
//! - it is a plain place: fields of the parsed request or of a node's outputs, through no
//!   box, no JSON lookup and no `Option` except at the last step ([`ValueIr::movable`]);
//! - it fills the pin as it is (the same type: no conversion, which borrows anyway);
//! - the function being generated owns it: the parsed request, or the outputs of a node
//!   that ran in this function (a merge point's function borrows its caller's outputs);
//! - nothing that can run afterwards reads it or anything that contains it: not the
//!   node's other inputs, not any node reachable after it;
//! - no merge point after it is handed the local it lives in (a merge point's function
//!   takes the parsed request whole, and borrows outputs whole).
//!
//! A later read of a *part* of the moved value (`request.body.currency` after
//! `request.body` went into a node) does not prevent the move when it runs in the same
//! function: the part is copied into a held local just before the move ([`HeldIr`]) and
//! the later read uses the copy. The part copied is never bigger than the whole it saves
//! copying.
//!
//! rustc checks the outcome: a mistake here is a compile error in the generated crate
//! (the snapshot and end-to-end tests build every example), never a wrong value.

use super::FlowLowerer;
use crate::lower::ir::{HeldIr, InputIr, Local, PinTarget, RootIr, ValueIr};
use std::collections::BTreeSet;
use svc_frontend::flow::NodeKind;

/// What the function being lowered owns at the node being lowered.
#[derive(Default)]
pub(in crate::lower) struct Scope {
    /// Code nodes that ran before this point in this function: it owns their outputs.
    ran: Vec<usize>,
    /// Held copies in scope: the path each one copies, and its name.
    held: Vec<(Vec<String>, String)>,
}

/// Where [`Scope::enter`] started, for [`Scope::leave`].
pub(super) struct Mark {
    ran: usize,
    held: usize,
}

impl Scope {
    /// After code node `node` (and its held copies), in the same function.
    pub(super) fn enter(&mut self, node: usize, held: &[HeldIr]) -> Mark {
        let mark = Mark {
            ran: self.ran.len(),
            held: self.held.len(),
        };
        self.ran.push(node);
        for h in held {
            if let Some(path) = h.value.path() {
                self.held.push((path, h.name.clone()));
            }
        }
        mark
    }

    pub(super) fn leave(&mut self, mark: Mark) {
        self.ran.truncate(mark.ran);
        self.held.truncate(mark.held);
    }

    /// `value` as read here: from its held copy, if one was taken.
    pub(super) fn read(&self, value: ValueIr) -> ValueIr {
        let Some(path) = value.path() else {
            return value;
        };
        match self.held.iter().rev().find(|(p, _)| *p == path) {
            Some((_, name)) => value.read_from(name),
            None => value,
        }
    }

    fn owns(&self, value: &ValueIr) -> bool {
        match &value.root {
            RootIr::Output { node, .. } => self.ran.contains(node),
            RootIr::Held { .. } => true,
            root => local_of_root(root) == Some(Local::Request),
        }
    }
}

/// The local a value of this root lives in, if a merge point's function can be handed it.
fn local_of_root(root: &RootIr) -> Option<Local> {
    match root {
        RootIr::Body { .. }
        | RootIr::BodyStruct
        | RootIr::BodyField { .. }
        | RootIr::Query { .. }
        | RootIr::Header { .. }
        | RootIr::Param { .. } => Some(Local::Request),
        RootIr::Output { node, .. } => Some(Local::Output(*node)),
        _ => None,
    }
}

impl ValueIr {
    /// Where the value lives, as field names from the local that holds it (the request, a
    /// node's outputs, a held copy), JSON keys marked with `#`. `None` for values no move
    /// takes from (failures, identities): they never stand in a move's way.
    pub fn path(&self) -> Option<Vec<String>> {
        let snake = svc_types::case::to_snake;
        let mut path: Vec<String> = match &self.root {
            RootIr::Body { .. } | RootIr::BodyStruct => vec!["req".into(), "body".into()],
            RootIr::BodyField { name, .. } => vec!["req".into(), "body".into(), snake(name)],
            RootIr::Query { name, .. } => vec!["req".into(), format!("query_{}", snake(name))],
            RootIr::Header { name, .. } => vec!["req".into(), format!("header_{}", snake(name))],
            RootIr::Param { name } => vec!["req".into(), format!("param_{}", snake(name))],
            RootIr::Output { node, pin, .. } => vec![format!("out{node}"), pin.clone()],
            RootIr::Held { name } => vec!["held".into(), name.clone()],
            RootIr::FailureMessage { .. } | RootIr::FailureCode { .. } | RootIr::Identity { .. } => return None,
        };
        path.extend(self.steps.iter().map(|s| {
            if s.json {
                format!("#{}", s.field)
            } else {
                s.field.clone()
            }
        }));
        Some(path)
    }

    /// The same value, read from the held copy `name`.
    fn read_from(&self, name: &str) -> ValueIr {
        ValueIr {
            root: RootIr::Held { name: name.to_string() },
            steps: Vec::new(),
            ty: self.ty.clone(),
            optional: self.optional,
        }
    }

    /// Whether the value is a place that can be moved out of its local as it is: fields
    /// all the way, through no box, no JSON lookup and no `Option` but the last step.
    pub fn movable(&self) -> bool {
        let mut option = match &self.root {
            RootIr::Body { .. } | RootIr::BodyStruct | RootIr::Param { .. } => false,
            RootIr::Held { .. } => self.optional,
            RootIr::BodyField { optional, .. }
            | RootIr::Query { optional, .. }
            | RootIr::Header { optional, .. }
            | RootIr::Output { optional, .. } => *optional,
            _ => return false,
        };
        for step in &self.steps {
            if step.json || step.boxed || option {
                return false;
            }
            option = step.optional;
        }
        true
    }
}

/// Whether `value` fills `pin` without a conversion (a conversion reads by reference).
fn fills_as_is(value: &ValueIr, pin: &PinTarget) -> bool {
    let whole_body_struct = matches!(value.root, RootIr::BodyStruct) && value.steps.is_empty();
    value.ty == pin.ty && !whole_body_struct
}

/// A read that may run after a move.
struct Read {
    value: ValueIr,
    path: Vec<String>,
    /// In the same generated function (where a held copy can stand in for it).
    same_function: bool,
}

/// The reads that can run after a node.
struct After {
    reads: Vec<Read>,
    /// Locals handed to a merge point's function after the node.
    passed_on: BTreeSet<Local>,
}

impl FlowLowerer<'_> {
    /// Decides which of node `i`'s wired inputs are moved rather than cloned, and returns
    /// the copies to hold before they are. Inputs that read a held copy are pointed at it.
    pub(super) fn plan_moves(&mut self, i: usize, inputs: &mut [(String, InputIr)]) -> Vec<HeldIr> {
        let after = self.reads_after(i);
        let own: Vec<Option<Read>> = inputs
            .iter()
            .map(|(_, input)| match input {
                InputIr::Wire { value, .. } => value.path().map(|path| Read {
                    value: value.clone(),
                    path,
                    same_function: true,
                }),
                _ => None,
            })
            .collect();
        let mut to_hold: Vec<ValueIr> = Vec::new();
        for (j, (_, input)) in inputs.iter_mut().enumerate() {
            let InputIr::Wire { value, pin, moved } = input else {
                continue;
            };
            let passed_on = local_of_root(&value.root).is_some_and(|l| after.passed_on.contains(&l));
            if !value.movable() || !fills_as_is(value, pin) || !self.scope.owns(value) || passed_on {
                continue;
            }
            let path = value.path().expect("a movable value has a path");
            let others = own
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != j)
                .filter_map(|(_, r)| r.as_ref())
                .chain(&after.reads);
            let mut hold = Vec::new();
            let mut free = true;
            for read in others {
                if read.path.starts_with(&path) && read.path.len() > path.len() && read.same_function {
                    // A part of it, read later here: hold a copy of the part.
                    hold.push(read.value.clone());
                } else if read.path.starts_with(&path) || path.starts_with(&read.path) {
                    // It, something containing it, or a part read where no copy can go.
                    free = false;
                    break;
                }
            }
            if free {
                *moved = true;
                for v in hold {
                    if !to_hold.iter().any(|h| h.path() == v.path()) {
                        to_hold.push(v);
                    }
                }
            }
        }
        let held: Vec<HeldIr> = to_hold
            .into_iter()
            .map(|value| HeldIr {
                name: self.held_name(&value),
                value,
            })
            .collect();
        // This node's own inputs that read a held part read the copy.
        for (_, input) in inputs.iter_mut() {
            if let InputIr::Wire {
                value, moved: false, ..
            } = input
                && let Some(h) = held.iter().find(|h| h.value.path() == value.path())
            {
                *value = value.read_from(&h.name);
            }
        }
        held
    }

    /// Every read of the nodes reachable after node `i`, and the locals passed on to merge
    /// points' functions.
    fn reads_after(&self, i: usize) -> After {
        let mut after = After {
            reads: Vec::new(),
            passed_on: BTreeSet::new(),
        };
        // (node, whether it is in another function: at or after a merge point)
        let mut stack: Vec<(usize, bool)> = self.graph.succ[i]
            .iter()
            .map(|e| (e.to, self.in_degree(e.to) > 1))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some((n, elsewhere)) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if elsewhere {
                after.passed_on.extend(self.locals_used_by(n));
                if self.parses_request(n, matches!(self.flow.nodes[n].kind, NodeKind::Code(_))) {
                    after.passed_on.insert(Local::Request);
                }
            }
            for r in self.wires_of(n) {
                // Held copies exist only in this function; elsewhere the original is read.
                let value = if elsewhere { self.raw_value(r) } else { self.value(r) };
                if let Some(path) = value.path() {
                    after.reads.push(Read {
                        value,
                        path,
                        same_function: !elsewhere,
                    });
                }
            }
            for e in &self.graph.succ[n] {
                stack.push((e.to, elsewhere || self.in_degree(e.to) > 1));
            }
        }
        after
    }

    /// `held_req_body_currency`, `held_price_quote_total`: unique in the route.
    fn held_name(&mut self, value: &ValueIr) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let RootIr::Output { node, .. } = &value.root {
            parts.push(svc_types::case::to_snake(&self.flow.nodes[*node].id.value));
        }
        let path = value.path().unwrap_or_default();
        // The first step names the local: `req`, or `out<n>` (named by its node above).
        let skip = usize::from(matches!(value.root, RootIr::Output { .. }));
        parts.extend(
            path.into_iter()
                .skip(skip)
                .filter(|p| !p.starts_with('#'))
                .map(|p| svc_types::case::to_snake(&p)),
        );
        let mut name = format!("held_{}", parts.join("_"));
        while !self.held_names.insert(name.clone()) {
            name.push('_');
        }
        name
    }
}
