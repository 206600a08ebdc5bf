//! `UnitsServer`: a unit converter for length, mass and temperature.

use rmcp::{
    ErrorData, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, ContentBlock},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// A physical dimension that units belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    /// Lengths (base unit: metre).
    Length,
    /// Masses (base unit: kilogram).
    Mass,
    /// Temperatures (converted through kelvin).
    Temperature,
}

impl Dimension {
    fn name(self) -> &'static str {
        match self {
            Dimension::Length => "length",
            Dimension::Mass => "mass",
            Dimension::Temperature => "temperature",
        }
    }
}

/// A supported unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    /// Canonical symbol, e.g. `km`.
    pub symbol: &'static str,
    /// Human name, e.g. `kilometre`.
    pub name: &'static str,
    /// The unit's dimension.
    pub dimension: Dimension,
    /// Size in the base unit (metres or kilograms); unused for temperatures.
    pub factor: f64,
}

const fn unit(symbol: &'static str, name: &'static str, dimension: Dimension, factor: f64) -> Unit {
    Unit {
        symbol,
        name,
        dimension,
        factor,
    }
}

/// Every supported unit.
pub const UNITS: &[Unit] = &[
    unit("m", "metre", Dimension::Length, 1.0),
    unit("km", "kilometre", Dimension::Length, 1000.0),
    unit("mi", "mile", Dimension::Length, 1609.344),
    unit("ft", "foot", Dimension::Length, 0.3048),
    unit("in", "inch", Dimension::Length, 0.0254),
    unit("kg", "kilogram", Dimension::Mass, 1.0),
    unit("g", "gram", Dimension::Mass, 0.001),
    unit("lb", "pound", Dimension::Mass, 0.453_592_37),
    unit("oz", "ounce", Dimension::Mass, 0.028_349_523_125),
    unit("C", "degree Celsius", Dimension::Temperature, 1.0),
    unit("F", "degree Fahrenheit", Dimension::Temperature, 1.0),
    unit("K", "kelvin", Dimension::Temperature, 1.0),
];

/// Looks a unit up by symbol or name (case-insensitive; plurals and `°C`-style accepted).
pub fn lookup(unit: &str) -> Option<Unit> {
    let u = unit.trim().trim_start_matches('°').to_lowercase();
    let u = u.as_str();
    UNITS.iter().copied().find(|x| {
        x.symbol.eq_ignore_ascii_case(u)
            || x.name == u
            || format!("{}s", x.name) == u
            || (x.symbol == "C" && u == "celsius")
            || (x.symbol == "F" && u == "fahrenheit")
            || (x.symbol == "ft" && u == "feet")
            || (x.symbol == "in" && u == "inches")
    })
}

fn to_kelvin(v: f64, symbol: &str) -> f64 {
    match symbol {
        "C" => v + 273.15,
        "F" => (v - 32.0) * 5.0 / 9.0 + 273.15,
        _ => v,
    }
}

fn from_kelvin(k: f64, symbol: &str) -> f64 {
    match symbol {
        "C" => k - 273.15,
        "F" => (k - 273.15) * 9.0 / 5.0 + 32.0,
        _ => k,
    }
}

/// Converts `value` from unit `from` to unit `to`.
///
/// Errors (as a human-readable message) on unknown units, units of different dimensions,
/// non-finite values and temperatures below absolute zero.
pub fn convert(value: f64, from: &str, to: &str) -> Result<f64, String> {
    if !value.is_finite() {
        return Err(format!("value must be a finite number, got {value}"));
    }
    let known = || {
        UNITS
            .iter()
            .map(|u| u.symbol)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let f =
        lookup(from).ok_or_else(|| format!("unknown unit {from:?}; known units: {}", known()))?;
    let t = lookup(to).ok_or_else(|| format!("unknown unit {to:?}; known units: {}", known()))?;
    if f.dimension != t.dimension {
        return Err(format!(
            "cannot convert {} ({}) to {} ({}): different dimensions",
            f.symbol,
            f.dimension.name(),
            t.symbol,
            t.dimension.name()
        ));
    }
    match f.dimension {
        Dimension::Temperature => {
            let k = to_kelvin(value, f.symbol);
            if k < 0.0 {
                return Err(format!("{value} {} is below absolute zero", f.symbol));
            }
            Ok(from_kelvin(k, t.symbol))
        }
        _ => Ok(value * f.factor / t.factor),
    }
}

/// Formats a number with at most 6 decimals, trailing zeros trimmed.
pub fn format_number(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Arguments of `convert`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConvertArgs {
    /// The quantity to convert.
    pub value: f64,
    /// Source unit symbol: m, km, mi, ft, in, kg, g, lb, oz, C, F or K.
    pub from: String,
    /// Target unit symbol, of the same dimension as `from`.
    pub to: String,
}

/// An MCP unit converter. Server info name: `pegboard-demo-units`.
///
/// Tools: `convert {value, from, to}` and `list_units {}`. Unknown or mismatched units give a
/// tool result with `is_error: true`.
#[derive(Debug, Clone)]
pub struct UnitsServer {
    tool_router: ToolRouter<Self>,
}

impl Default for UnitsServer {
    fn default() -> Self {
        Self::new()
    }
}

impl UnitsServer {
    /// A new converter (stateless).
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_router]
impl UnitsServer {
    /// Tool `convert`.
    #[tool(
        name = "convert",
        description = "Convert a value between units of the same dimension. Length: m, km, mi, ft, in. Mass: kg, g, lb, oz. Temperature: C, F, K. Returns e.g. \"10 km = 6.213712 mi\"."
    )]
    async fn convert(
        &self,
        Parameters(ConvertArgs { value, from, to }): Parameters<ConvertArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match convert(value, &from, &to) {
            Ok(out) => {
                // Unwrap-free: both lookups succeeded inside `convert`.
                let fs = lookup(&from).map_or(from.as_str(), |u| u.symbol);
                let ts = lookup(&to).map_or(to.as_str(), |u| u.symbol);
                CallToolResult::success(vec![ContentBlock::text(format!(
                    "{} {fs} = {} {ts}",
                    format_number(value),
                    format_number(out)
                ))])
            }
            Err(msg) => CallToolResult::error(vec![ContentBlock::text(msg)]),
        })
    }

    /// Tool `list_units`.
    #[tool(
        name = "list_units",
        description = "List the supported units, grouped by dimension (length, mass, temperature)."
    )]
    async fn list_units(&self) -> Result<CallToolResult, ErrorData> {
        let mut out = String::new();
        for dim in [Dimension::Length, Dimension::Mass, Dimension::Temperature] {
            let list: Vec<String> = UNITS
                .iter()
                .filter(|u| u.dimension == dim)
                .map(|u| format!("{} ({})", u.symbol, u.name))
                .collect();
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("{}: {}", dim.name(), list.join(", ")));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(out)]))
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "pegboard-demo-units",
    instructions = "Convert values between units of length, mass and temperature."
)]
impl ServerHandler for UnitsServer {}
