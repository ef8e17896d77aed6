// Package sandbox runs model-written JavaScript in WASM cells: QuickJS-ng
// compiled to WASI (the qjs.wasm of github.com/fastschema/qjs v0.0.6),
// driven directly through its exported C ABI on one wazero runtime. It
// implements kairos.CodeRunner and is the only importer of wazero.
//
// It must not: give a cell any host file system, environment variable,
// argument or clock other than the ones described here; let a disabled
// feature exist inside a cell; return a secret value or its encodings in
// any output; crash, hang or leak goroutines because of what a cell does;
// import other adapters.
//
// # Engine
//
// One wazero runtime per Runner compiles the module once (Config.CacheDir
// holds wazero's compilation cache), lazily on the first Run or Warm. At
// warm-up the engine creates one fully initialised instance (QuickJS
// runtime and context, the host function, the prelude), copies its linear
// memory as a snapshot, and from then on every cell gets a fresh instance
// whose memory is a copy of the snapshot (about 0.2 ms); a small pool
// (Config.PoolSize) keeps a few ready. Instances are never reused.
//
// The module is patched at load (memory and global sections only) to give
// QuickJS a 1 MiB C stack instead of 64 KiB; QuickJS-ng's own stack check
// is compiled out for WASI, so a recursion deeper than about 5000 frames
// overruns the stack; a canary below the stack detects it and the result
// is category memory ("stack overflow"). Memory: Budget.MemoryLimit bounds
// the cell's whole linear memory: each instance's memory is backed by our
// own allocator (memlimit.go), so a growth past the cell's limit fails at
// once and stops the cell (QuickJS's own malloc limit is useless in this
// build: it counts 8 bytes per allocation); it is also checked at every
// interrupt poll, with a wazero page cap (MaxMemoryLimit + 64 MiB) behind.
//
// Interruption: a wazero function listener is attached to QuickJS's
// interrupt poll (__js_poll_interrupts, identified by its shape), which the
// interpreter calls every 10000 bytecodes, and to a tiny pure function of
// the module's table installed as QuickJS's interrupt handler (the regexp
// engine calls the handler directly); both are checked at warm-up. The
// listener stops a cell at its deadline, on its memory limit or when a
// budget is spent (it panics, which unwinds the WASM stack), and it gives
// the Go scheduler a regular preemption point: wazero's compiled code is
// otherwise not preemptible, and a long loop would block every
// stop-the-world (garbage collection) of the process. Measured on a tight
// loop: 1.27x the cost of no interruption at all, against 5.3x for
// wazero's WithCloseOnContextDone (BenchmarkInterruption). Host calls,
// WASI writes and sleeps also check the stop flag. A third listener sits on
// JS_ExecutePendingJob (found through the exported js_std_await, checked at
// warm-up): a top-level await on a promise that never settles leaves the
// job loop idling in C, where no bytecode runs and no host call is made, so
// neither the poll nor the stop flag would be reached; the job loop calls
// it on every turn, so such a cell ends at its budget or cancellation too.
// WithCloseOnContextDone stays off: the eval's context carries no deadline,
// the listeners enforce it.
//
// # What a cell sees
//
// No arguments, no environment, no preopened directory (std/os modules
// exist but see no files; std.loadFile("/etc/passwd") is null). Date.now()
// starts at task.Now (Config.Now() when zero) and advances with the cell's
// elapsed monotonic time; performance-style clocks start at 0. The time
// zone is UTC. Math.random is seeded per cell from crypto/rand. Top-level
// await is allowed (the code is a global script, so static import
// statements are a syntax error, category import).
//
// Globals (seed 003's prelude, each a wrapper over one host function):
//
//	getSecret(name)              TaintedString holding a sealed token
//	                             (⟦secret:NAME:nonce⟧), never the value: the
//	                             host unseals it only in a request's URL,
//	                             headers and body (sealed.go); "[REDACTED]"
//	                             in console output, JSON and output()
//	listSecrets()                secret names (getSecret and listSecrets
//	                             exist only with CellTask.Credentials:
//	                             features.credentials_access)
//	attachments()                the turn's files: [{name, kind, mime, size}]
//	readAttachment(name)         {name, mime, text} (extracted text, transcript
//	                             or UTF-8) or {name, mime, base64}; counts
//	                             against the bytes-read budget
//	output(data)                 the cell's structured result (last call wins)
//	sleep(ms)                    Promise; sleeps on the host, never past the
//	                             deadline (sleeping into it stops the cell: timeout)
//	checkpoint({cursor, state, completed, stage})
//	                             records a checkpoint (last call wins), returns
//	                             {continuation_id, state_blob_ref}; the cell goes on
//	budget()                     what is left: ms, tool_calls, network_calls,
//	                             bytes_read, bytes_written, output_bytes, …
//	resume                       the checkpoint being resumed (task.Resume) or null
//	console.log/info/debug/warn/error, print
//
// Only when task.Network.Enabled (otherwise these globals do not exist):
//
//	fetch(url, options)          Response-like {ok, status, headers.get, text(), json()}
//	fetchWithAuth(url, {authSecret, method, headers, body})
//	                             the host adds "Authorization: Bearer <secret>";
//	                             the value never enters the cell
//	getJSON(url, authSecret?)    GET, parsed JSON; NetworkError on HTTP >= 300
//	postJSON(url, body, authSecret?)
//
// Network policy, on the host, for every request and every redirect: http
// or https only, no credentials in URLs; the host must be on
// task.Network.AllowHosts (exact host, or "*.suffix" for subdomains); then
// the blocked categories are refused whatever the allow-list says:
// banking/brokerage, payments, crypto exchanges (built-in domain lists) and
// login flows (known identity hosts, hosts starting login./sso./auth./…,
// and URL paths with a segment such as login, signin, oauth, auth,
// authorize, sso, saml, password); entries of
// task.Network.BlockedCategories that contain a dot are blocked as domains.
// The method must be in task.Network.Methods (GET when empty). A refusal
// or a transport failure throws a NetworkError the cell may catch
// (uncaught: category network).
//
// # Budgets
//
// Zero fields of task.Budget take the Default* constants (those of
// kairos.DefaultPolicy). TimeBudget and DeadlineAt (the earlier wins, and
// the context's deadline too) bound the whole cell, sleeps and HTTP
// included. MaxToolCalls counts getSecret, listSecrets, attachments, readAttachment, sleep and every
// network call; MaxNetworkCalls, MaxBytesRead (response bodies) and
// MaxBytesWritten (request bodies) count the network; MaxOutputBytes
// bounds stdout + stderr + output() together (the text is truncated at the
// limit). Reaching any of them stops the cell at once (it cannot catch
// it): Success false with category timeout, budget or memory. RiskTier is
// recorded only.
//
// # Checkpoints
//
// checkpoint() may be called any number of times; the result carries the
// last one: Checkpoint{ContinuationID (task.ContinuationID, or a new UUID),
// Cursor, Completed, Stage, State (the state as JSON, at most 256 KiB) and
// StateBlobRef ("sha256:<hex>" of State, for the store to key the blob)}.
// A cell that checkpoints and then ends normally succeeds with the
// checkpoint (it declared itself incomplete); one that times out or hits a
// budget after checkpointing fails with the checkpoint, so it can be
// resumed: the caller passes it back as task.Resume with its
// ContinuationID.
//
// # Secrets
//
// Before running, ScanForLeaks refuses code that would obviously log a
// secret (category rejected). After running, stdout, stderr, the error
// text, output() and the checkpoint are scrubbed with redact.Redactor
// (raw values, base64, hex, URL encoding, chunks and split prints; see
// redact.go in the root package).
//
// # Error categories
//
// Categorize maps the engine's error text: SyntaxError → syntax (import
// when about import), TypeError → type, ReferenceError → reference,
// NetworkError → network, out of memory and stack overflow → memory,
// module loading → import, anything else → runtime; the host adds timeout,
// budget, memory and rejected.
package sandbox
