// The LangGraph checkpoint-validation suite calls `expect.soft`, which jest lacks; a soft
// expectation that fails hard is strictly stricter, so this shim cannot hide a failure.
if (typeof expect !== 'undefined' && typeof expect.soft !== 'function') {
  expect.soft = (...args) => expect(...args);
}
