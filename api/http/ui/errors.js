// Loaded first: every uncaught error, rejected promise and console.error of the page is kept in
// window.ibfErrors, so tests and tools can read what went wrong (docs/ui.md).
"use strict";
window.ibfErrors = [];
window.addEventListener("error", (e) => {
  window.ibfErrors.push("error: " + (e.message || e.type) + " at " + (e.filename || "") + ":" +
                        (e.lineno || 0));
});
window.addEventListener("unhandledrejection", (e) => {
  window.ibfErrors.push("unhandled rejection: " + String(e.reason && e.reason.stack || e.reason));
});
(() => {
  const original = console.error.bind(console);
  console.error = (...args) => {
    window.ibfErrors.push("console.error: " + args.map(String).join(" "));
    original(...args);
  };
})();
