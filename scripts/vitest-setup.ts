// Pulumi's promise bookkeeping captures a stack trace per promise; with full traces the mock
// tests run 2–3× slower (see shared/reference/offline-toolchain.md §2). Nothing here reads them.
Error.stackTraceLimit = 10;
