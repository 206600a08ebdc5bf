//! The gateway's [`ListingFilter`]: at every listing of a server's tools and prompts (start,
//! `list_changed`, restart, reload, and each `prompts/list`), compare each item with its pin and
//! act on `onChange` / `onNew`, run the description scan, and strip invisible characters from
//! what is listed. What is news is logged and counted once.

use std::borrow::Cow;

use pegboard::{Listing, ListingFilter, Named};
use rmcp::model::{Prompt, Tool};
use serde_json::Value;

use super::canonical;
use super::counters::counters;
use super::lock::{Kind, ServerId};
use super::policy::Guards;
use super::report::Verdict;
use super::status::{Action, Status};
use crate::guards::{invisible, scan};

/// The filter of one server entry (see the module docs).
#[derive(Debug)]
pub struct PinFilter {
    server: String,
    guards: Guards,
}

impl PinFilter {
    /// The filter of the config entry `server` with its `guards`.
    pub fn new(server: impl Into<String>, guards: Guards) -> Self {
        Self {
            server: server.into(),
            guards,
        }
    }

    fn check<T: Item>(&self, kind: Kind, listing: &mut Listing<'_, T>) {
        let pins = self.guards.pins.as_deref();
        let mut verdicts = Vec::with_capacity(listing.items.len());
        let mut hidden = Vec::new();
        for item in &listing.items {
            let name = item.name().to_string();
            let board_name = listing.board_name(&name).unwrap_or_else(|| name.clone());
            let definition = item.definition();
            let sha256 = canonical::digest(&definition);
            let status = match pins.map(|p| p.of(kind).get(&name)) {
                None => Status::Pinned,
                Some(None) => Status::New,
                Some(Some(pin)) if pin.sha256 == sha256 => Status::Pinned,
                Some(Some(_)) => Status::Changed,
            };
            let action = self.guards.action(status);
            if action == Action::Hide {
                hidden.push((name.clone(), hidden_reason(kind, status, &board_name)));
            }
            verdicts.push(Verdict {
                kind,
                findings: item.scan(&board_name),
                name,
                board_name,
                status,
                action,
                sha256,
                definition,
            });
        }
        for (name, reason) in hidden {
            listing.withhold(&name, reason);
        }
        if self.guards.strip_invisible {
            for item in &mut listing.items {
                item.strip_invisible();
            }
        }
        let server = listing.server.map(|s| ServerId {
            name: s.name.clone(),
            version: s.version.clone(),
        });
        for verdict in self.guards.report.record(kind, server, verdicts) {
            self.tell(&verdict);
        }
    }

    /// Log and count one verdict that is news.
    fn tell(&self, v: &Verdict) {
        let server = self.server.as_str();
        let what = v.kind.as_str();
        let name = v.board_name.as_str();
        counters().action(v.kind, v.action);
        match (v.status, v.action) {
            (_, Action::Hide) => {
                tracing::warn!(server, "{}", hidden_reason(v.kind, v.status, name))
            }
            (Status::Changed, _) => tracing::warn!(
                server,
                "{what} `{name}` changed since it was pinned (onChange: warn, so it is listed); \
                 review with `pegboard pin --diff` and accept with `pegboard pin --accept {name}`"
            ),
            (Status::New, _) => tracing::info!(
                server,
                "{what} `{name}` is not pinned; `pegboard pin --accept {name}` pins it"
            ),
            (Status::Pinned, _) => {}
        }
        let stripped = if self.guards.strip_invisible && v.action != Action::Hide {
            " (stripped from what the gateway lists)"
        } else {
            ""
        };
        for finding in &v.findings {
            counters().finding(finding.marker);
            let note = match finding.marker {
                scan::Marker::Invisible | scan::Marker::Bidi => stripped,
                _ => "",
            };
            tracing::warn!(server, "description scan (a heuristic): {finding}{note}");
        }
    }
}

/// What a call of a hidden item is answered with.
pub fn hidden_reason(kind: Kind, status: Status, board_name: &str) -> String {
    let what = kind.as_str();
    let happened = match status {
        Status::New => "is new since the tools were pinned",
        _ => "changed since it was pinned",
    };
    format!(
        "{what} `{board_name}` {happened}; review with `pegboard pin --diff` and accept with `pegboard pin --accept {board_name}`"
    )
}

impl ListingFilter for PinFilter {
    fn tools(&self, listing: &mut Listing<'_, Tool>) {
        self.check(Kind::Tool, listing);
    }

    fn prompts(&self, listing: &mut Listing<'_, Prompt>) {
        self.check(Kind::Prompt, listing);
    }
}

/// What the filter needs of a tool or a prompt.
trait Item: Named {
    fn definition(&self) -> Value;
    fn scan(&self, board_name: &str) -> Vec<scan::Finding>;
    /// Take invisible characters out of the text a model reads of it.
    fn strip_invisible(&mut self);
}

impl Item for Tool {
    fn definition(&self) -> Value {
        canonical::tool_definition(self)
    }

    fn scan(&self, board_name: &str) -> Vec<scan::Finding> {
        scan::scan_tool(board_name, self)
    }

    fn strip_invisible(&mut self) {
        if let Some(clean) = self.description.as_deref().and_then(invisible::strip) {
            self.description = Some(Cow::Owned(clean));
        }
        strip_option(&mut self.title);
        if let Some(clean) = strip_schema(&Value::Object((*self.input_schema).clone()))
            && let Value::Object(map) = clean
        {
            self.input_schema = std::sync::Arc::new(map);
        }
        if let Some(schema) = &self.output_schema
            && let Some(Value::Object(map)) = strip_schema(&Value::Object((**schema).clone()))
        {
            self.output_schema = Some(std::sync::Arc::new(map));
        }
    }
}

impl Item for Prompt {
    fn definition(&self) -> Value {
        canonical::prompt_definition(self)
    }

    fn scan(&self, board_name: &str) -> Vec<scan::Finding> {
        scan::scan_prompt(board_name, self)
    }

    fn strip_invisible(&mut self) {
        strip_option(&mut self.description);
        strip_option(&mut self.title);
        for argument in self.arguments.iter_mut().flatten() {
            strip_option(&mut argument.description);
            strip_option(&mut argument.title);
        }
    }
}

fn strip_option(text: &mut Option<String>) {
    if let Some(clean) = text.as_deref().and_then(invisible::strip) {
        *text = Some(clean);
    }
}

/// The schema with invisible characters taken out of its `description` and `title` strings;
/// `None` when there were none.
fn strip_schema(schema: &Value) -> Option<Value> {
    fn walk(value: &mut Value, changed: &mut bool) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match v {
                        Value::String(text) if key == "description" || key == "title" => {
                            if let Some(clean) = invisible::strip(text) {
                                *text = clean;
                                *changed = true;
                            }
                        }
                        _ => walk(v, changed),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, changed)),
            _ => {}
        }
    }
    let mut copy = schema.clone();
    let mut changed = false;
    walk(&mut copy, &mut changed);
    changed.then_some(copy)
}
