//! Where and how to export spans, read from the standard `OTEL_*` variables.
//!
//! On when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set (and
//! `OTEL_SDK_DISABLED` is not `true`, `OTEL_TRACES_EXPORTER` not `none`). Honoured:
//! `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` (`http/protobuf`, the default, or `grpc`),
//! `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT` (ms), `OTEL_SERVICE_NAME` (default `pegboard`),
//! `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` (default `parentbased_always_on`),
//! `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_SCHEDULE_DELAY` (ms), `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`;
//! `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS` and `OTEL_RESOURCE_ATTRIBUTES` are read by the
//! `opentelemetry` crates themselves. A value we cannot use is an error at startup, never a
//! silent fallback.

use std::time::Duration;

use opentelemetry_sdk::trace::Sampler;

use super::error::TelemetryError;

/// How spans are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `http/protobuf`: POST to `…/v1/traces`.
    HttpProtobuf,
    /// `grpc`.
    Grpc,
}

/// Where and how to export spans: read from the environment by [`TraceExport::from_env`].
#[derive(Debug, Clone)]
pub struct TraceExport {
    /// The traces endpoint (for HTTP, the full URL of `/v1/traces`).
    pub endpoint: String,
    /// The protocol.
    pub protocol: OtlpProtocol,
    /// `service.name`.
    pub service_name: String,
    /// The sampler.
    pub sampler: Sampler,
    /// Spans queued or being exported at most; more are dropped and counted.
    pub max_queue: usize,
    /// Time between exports.
    pub schedule_delay: Duration,
    /// Spans per export at most.
    pub max_batch: usize,
    /// How long one export may take.
    pub timeout: Duration,
}

fn non_empty(get: &impl Fn(&str) -> Option<String>, key: &str) -> Option<String> {
    get(key)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn number<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    key: &'static str,
    what: &'static str,
) -> Result<Option<T>, TelemetryError> {
    non_empty(get, key)
        .map(|v| {
            v.parse::<T>().map_err(|_| TelemetryError::BadVariable {
                name: key,
                value: v,
                expected: what,
            })
        })
        .transpose()
}

fn sampler(get: &impl Fn(&str) -> Option<String>) -> Result<Sampler, TelemetryError> {
    let ratio = || -> Result<f64, TelemetryError> {
        match number::<f64>(get, "OTEL_TRACES_SAMPLER_ARG", "a ratio between 0 and 1")? {
            None => Ok(1.0),
            Some(r) if (0.0..=1.0).contains(&r) => Ok(r),
            Some(r) => Err(TelemetryError::BadVariable {
                name: "OTEL_TRACES_SAMPLER_ARG",
                value: r.to_string(),
                expected: "a ratio between 0 and 1",
            }),
        }
    };
    let parent = |s: Sampler| Sampler::ParentBased(Box::new(s));
    Ok(
        match non_empty(get, "OTEL_TRACES_SAMPLER")
            .as_deref()
            .unwrap_or("parentbased_always_on")
        {
            "always_on" => Sampler::AlwaysOn,
            "always_off" => Sampler::AlwaysOff,
            "traceidratio" => Sampler::TraceIdRatioBased(ratio()?),
            "parentbased_always_on" => parent(Sampler::AlwaysOn),
            "parentbased_always_off" => parent(Sampler::AlwaysOff),
            "parentbased_traceidratio" => parent(Sampler::TraceIdRatioBased(ratio()?)),
            other => {
                return Err(TelemetryError::BadVariable {
                    name: "OTEL_TRACES_SAMPLER",
                    value: other.to_string(),
                    expected: "always_on, always_off, traceidratio, parentbased_always_on, \
                               parentbased_always_off or parentbased_traceidratio",
                });
            }
        },
    )
}

impl TraceExport {
    /// The export the process environment asks for; `None` when no OTLP endpoint is set.
    ///
    /// # Errors
    /// A variable with a value we cannot use (named in the message).
    pub fn from_env() -> Result<Option<Self>, TelemetryError> {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// [`TraceExport::from_env`] over `get` instead of the process environment.
    ///
    /// # Errors
    /// As [`TraceExport::from_env`].
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, TelemetryError> {
        if non_empty(&get, "OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        match non_empty(&get, "OTEL_TRACES_EXPORTER").as_deref() {
            None | Some("otlp") => {}
            Some("none") => return Ok(None),
            Some(other) => {
                return Err(TelemetryError::BadVariable {
                    name: "OTEL_TRACES_EXPORTER",
                    value: other.to_string(),
                    expected: "otlp or none",
                });
            }
        }
        let protocol_var = [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ]
        .into_iter()
        .find_map(|k| non_empty(&get, k).map(|v| (k, v)));
        let protocol = match protocol_var {
            None => OtlpProtocol::HttpProtobuf,
            Some((_, v)) if v == "http/protobuf" => OtlpProtocol::HttpProtobuf,
            Some((_, v)) if v == "grpc" => OtlpProtocol::Grpc,
            Some((name, value)) => {
                return Err(TelemetryError::BadVariable {
                    name,
                    value,
                    expected: "http/protobuf or grpc",
                });
            }
        };
        let endpoint = if let Some(url) = non_empty(&get, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            url
        } else if let Some(base) = non_empty(&get, "OTEL_EXPORTER_OTLP_ENDPOINT") {
            match protocol {
                OtlpProtocol::HttpProtobuf => format!("{}/v1/traces", base.trim_end_matches('/')),
                OtlpProtocol::Grpc => base,
            }
        } else {
            return Ok(None);
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(TelemetryError::BadVariable {
                name: "OTEL_EXPORTER_OTLP_ENDPOINT",
                value: endpoint,
                expected: "an http:// or https:// URL",
            });
        }
        let timeout_ms =
            match number::<u64>(&get, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "milliseconds")? {
                Some(ms) => ms,
                None => number::<u64>(&get, "OTEL_EXPORTER_OTLP_TIMEOUT", "milliseconds")?
                    .unwrap_or(10_000),
            };
        let max_queue = number::<usize>(&get, "OTEL_BSP_MAX_QUEUE_SIZE", "a number of spans")?
            .unwrap_or(2048)
            .max(1);
        Ok(Some(Self {
            endpoint,
            protocol,
            service_name: non_empty(&get, "OTEL_SERVICE_NAME").unwrap_or_else(|| "pegboard".into()),
            sampler: sampler(&get)?,
            max_queue,
            schedule_delay: Duration::from_millis(
                number::<u64>(&get, "OTEL_BSP_SCHEDULE_DELAY", "milliseconds")?.unwrap_or(5000),
            ),
            max_batch: number::<usize>(
                &get,
                "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
                "a number of spans",
            )?
            .unwrap_or(512)
            .clamp(1, max_queue),
            timeout: Duration::from_millis(timeout_ms),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn no_endpoint_means_no_export() -> Result<(), TelemetryError> {
        assert!(TraceExport::from_lookup(lookup(&[]))?.is_none());
        let disabled = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ];
        assert!(TraceExport::from_lookup(lookup(&disabled))?.is_none());
        Ok(())
    }

    #[test]
    fn endpoints_protocols_and_samplers_follow_the_otel_variables() -> Result<(), TelemetryError> {
        let c =
            TraceExport::from_lookup(lookup(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/")]))?;
        let c = c.expect("an endpoint is set");
        assert_eq!(
            (c.endpoint.as_str(), c.protocol),
            ("http://c:4318/v1/traces", OtlpProtocol::HttpProtobuf)
        );
        assert_eq!(c.service_name, "pegboard");
        let c = TraceExport::from_lookup(lookup(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:4317"),
            ("OTEL_SERVICE_NAME", "gw"),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ]))?
        .expect("an endpoint is set");
        assert_eq!(
            (c.endpoint.as_str(), c.protocol),
            ("http://t:4317", OtlpProtocol::Grpc)
        );
        assert_eq!(c.service_name, "gw");
        assert!(format!("{:?}", c.sampler).contains("0.25"));
        Ok(())
    }

    #[test]
    fn unusable_values_are_errors_that_name_the_variable() {
        for vars in [
            vec![("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")],
            vec![("OTEL_TRACES_SAMPLER", "sometimes")],
            vec![
                ("OTEL_TRACES_SAMPLER", "traceidratio"),
                ("OTEL_TRACES_SAMPLER_ARG", "2"),
            ],
            vec![("OTEL_BSP_MAX_QUEUE_SIZE", "many")],
            vec![("OTEL_TRACES_EXPORTER", "zipkin")],
        ] {
            let mut vars = vars;
            vars.push(("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"));
            let err = TraceExport::from_lookup(lookup(&vars)).expect_err("must fail");
            let name = vars[0].0;
            assert!(err.to_string().contains(name), "{err} should name {name}");
        }
        let err = TraceExport::from_lookup(lookup(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "c:4318")]));
        assert!(err.is_err());
    }
}
