// Kairos cell prelude. Evaluated once into the engine snapshot; every
// global below is a thin wrapper over one host function, so policy and
// budgets are enforced on the host. See doc.go for the contract.
(function () {
  "use strict";
  const g = globalThis;
  const host = g.__kairos_host;
  delete g.__kairos_host;
  delete g.std;
  delete g.os;
  delete g.bjson;
  delete g.QJS_PROXY_VALUE;
  delete g.scriptArgs;

  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const keys = Object.keys;
  const ErrorTypes = {
    Error, TypeError, RangeError, ReferenceError, SyntaxError,
  };

  class NetworkError extends Error {
    constructor(message) {
      super(message);
      this.name = "NetworkError";
    }
  }

  function call(op, arg) {
    const r = parse(host(op, arg === undefined ? "null" : stringify(arg)));
    if (r.e !== undefined) {
      const E = r.n === "NetworkError" ? NetworkError : (ErrorTypes[r.n] || Error);
      throw new E(r.e);
    }
    return r.v;
  }

  // Tainted secrets: a sealed token inside the cell (template literals,
  // String(), headers: the host puts the value in on the way out),
  // "[REDACTED]" in logs and JSON.
  const values = new WeakMap();
  class TaintedString {
    constructor(v) {
      values.set(this, v);
      Object.freeze(this);
    }
    toString() { return values.get(this); }
    valueOf() { return values.get(this); }
    toJSON() { return "[REDACTED]"; }
    [Symbol.toPrimitive]() { return values.get(this); }
    get length() { return values.get(this).length; }
  }
  Object.freeze(TaintedString.prototype);

  function replacer(_k, v) {
    if (v instanceof TaintedString) return "[REDACTED]";
    if (typeof v === "bigint") return v.toString();
    return v;
  }

  function fmt(v) {
    if (v instanceof TaintedString) return "[REDACTED]";
    switch (typeof v) {
      case "string": return v;
      case "undefined": return "undefined";
      case "function": return "[Function " + (v.name || "anonymous") + "]";
      case "object":
        if (v === null) return "null";
        if (v instanceof Error) return String(v) + (v.stack ? "\n" + v.stack : "");
        try {
          const s = stringify(v, replacer);
          return s === undefined ? String(v) : s;
        } catch (_e) {
          return String(v);
        }
      default: return String(v);
    }
  }

  function writer(op) {
    return function (...args) {
      host(op, args.map(fmt).join(" ") + "\n");
    };
  }
  const log = writer("out");
  const err = writer("err");
  g.console = Object.freeze({
    log, info: log, debug: log, trace: log, warn: err, error: err,
  });
  g.print = log;

  g.getSecret = function getSecret(name) {
    return new TaintedString(call("secret", String(name)));
  };
  g.listSecrets = function listSecrets() { return call("secrets"); };
  g.attachments = function attachments() { return call("files"); };
  g.readAttachment = function readAttachment(name) { return call("file", String(name)); };
  g.output = function output(data) {
    const s = stringify(data === undefined ? null : data, replacer);
    host("output", s === undefined ? "null" : s);
  };
  g.sleep = function sleep(ms) {
    call("sleep", Number(ms) || 0);
    return Promise.resolve();
  };
  g.checkpoint = function checkpoint(cp) {
    const c = cp || {};
    const completed = c.completed || c.completed_steps;
    return call("checkpoint", {
      cursor: c.cursor === undefined ? "" : String(c.cursor),
      stage: c.stage === undefined ? (c.current_stage === undefined ? "" : String(c.current_stage)) : String(c.stage),
      completed: Array.isArray(completed) ? completed.map(String) : [],
      state: c.state === undefined ? null : c.state,
    });
  };
  g.budget = function budget() { return call("budget"); };
  g.TaintedString = TaintedString;
  g.NetworkError = NetworkError;

  function response(r) {
    const h = r.headers || {};
    return Object.freeze({
      ok: r.status >= 200 && r.status < 300,
      status: r.status,
      statusText: r.statusText || "",
      url: r.url,
      headers: Object.freeze({
        get(n) { const v = h[String(n).toLowerCase()]; return v === undefined ? null : v; },
        has(n) { return h[String(n).toLowerCase()] !== undefined; },
      }),
      text() { return Promise.resolve(r.body); },
      json() {
        return new Promise((resolve) => resolve(parse(r.body)));
      },
    });
  }

  function request(url, options) {
    const o = options || {};
    const req = {
      url: String(url),
      method: o.method ? String(o.method).toUpperCase() : "GET",
      headers: {},
      authSecret: o.authSecret ? String(o.authSecret) : "",
    };
    if (o.headers) {
      for (const k of keys(o.headers)) req.headers[k] = String(o.headers[k]);
    }
    if (o.body !== undefined && o.body !== null) {
      req.body = typeof o.body === "string" ? o.body : stringify(o.body, replacer);
    }
    return new Promise((resolve) => resolve(response(call("fetch", req))));
  }

  async function checked(p) {
    const res = await p;
    const text = await res.text();
    if (!res.ok) throw new NetworkError("HTTP " + res.status + ": " + text.slice(0, 500));
    try {
      return parse(text);
    } catch (e) {
      throw new SyntaxError("response is not JSON: " + e.message);
    }
  }

  const net = {
    fetch(url, options) {
      const o = Object.assign({}, options || {});
      delete o.authSecret;
      return request(url, o);
    },
    fetchWithAuth(url, options) { return request(url, options); },
    getJSON(url, authSecret) { return checked(request(url, { authSecret })); },
    postJSON(url, body, authSecret) {
      return checked(request(url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: stringify(body === undefined ? null : body, replacer),
        authSecret,
      }));
    },
  };

  // Per-cell setup, called once by the host before the cell's code, then
  // removed. A disabled feature is absent, not refused.
  g.__kairos_setup = function (network, credentials, seed, resume) {
    delete g.__kairos_setup;
    if (network) {
      for (const k of keys(net)) g[k] = net[k];
    }
    if (!credentials) {
      delete g.getSecret;
      delete g.listSecrets;
    }
    g.resume = resume ? Object.freeze(parse(resume)) : null;
    let s = seed >>> 0;
    Math.random = function random() {
      s = (s + 0x6D2B79F5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  };
})();
