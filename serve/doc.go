// Package serve is inlay's local web UI and its JSON API (inlay serve): the
// pages and their assets are embedded (web/), the API (openapi.yaml, served
// at /api/openapi.yaml) mirrors the CLI and calls the same library code —
// workload parsing and loading, platform presets, the planners of the search
// registry, the simulator, the bound and bench, the cluster simulator, and
// the training planners side by side (app.TrainCompare) with each plan's
// traced iteration and memory per GPU.
//
// Safety. Server.Handler enforces the token when Config.Token is set
// (Authorization: Bearer TOKEN, or the cookie a browser gets from opening
// /?token=TOKEN once) and answers 401 without it; CheckListen refuses a
// non-loopback address without a token. Without a token only loopback Host
// headers are served (no DNS rebinding), and cross-origin writes are refused.
// Request bodies are capped (Config.MaxBody), every search is bounded by its
// budget (at most Config.MaxBudget) and at most Config.MaxSearches run at
// once (429 beyond); a search whose request goes away (the browser closed the
// page) is cancelled. Requests name no file-system paths except inside
// Config.Examples and the fetched models' folder (cache: paths). Bad requests
// get a 4xx with a JSON body {"error": "one line"}; the line is the CLI's own
// error where the CLI has one.
package serve
