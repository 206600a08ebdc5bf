// How PegBoard names what a server offers (PASSTHROUGH.md §3, §4), so one client run can expect it.
// No namespace: verbatim (a direct connection). Namespace `ns`: tools and prompts `ns-name`; a URI
// `u` becomes `ns+u`, except `ui://rest`, which becomes `ui://ns+rest`; log loggers start with `ns`.
// The decoders throw when a name is not in the expected form, so a wrongly named item fails its
// feature instead of comparing equal by accident.

export class Naming {
  constructor(namespace) {
    this.ns = namespace || null;
  }

  name(original) {
    return this.ns ? `${this.ns}-${original}` : original;
  }

  decodeName(shown) {
    if (!this.ns) return shown;
    const prefix = `${this.ns}-`;
    if (!shown.startsWith(prefix)) throw new Error(`${JSON.stringify(shown)} lacks the namespace prefix ${prefix}`);
    return shown.slice(prefix.length);
  }

  uri(original) {
    if (!this.ns) return original;
    if (original.startsWith("ui://")) return `ui://${this.ns}+${original.slice(5)}`;
    return `${this.ns}+${original}`;
  }

  decodeUri(shown) {
    if (!this.ns) return shown;
    const prefix = `${this.ns}+`;
    if (shown.startsWith("ui://")) {
      const rest = shown.slice(5);
      if (!rest.startsWith(prefix)) throw new Error(`${shown} lacks the namespace in its ui:// authority`);
      return `ui://${rest.slice(prefix.length)}`;
    }
    if (!shown.startsWith(prefix)) throw new Error(`${shown} lacks the namespace scheme prefix ${prefix}`);
    return shown.slice(prefix.length);
  }

  checkLogger(logger) {
    if (this.ns && !(logger || "").startsWith(this.ns)) {
      throw new Error(`log message logger ${JSON.stringify(logger)} does not start with ${this.ns}`);
    }
  }
}
