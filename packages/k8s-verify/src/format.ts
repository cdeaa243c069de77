import { formatMs } from './clock.ts';
import { LOAD_PROBE_LABEL, type CheckResult, type CheckStatus, type VerifyEvent, type VerifyResult, type VerifyTarget } from './types.ts';

/** One row of the summary table. The CLI may draw its own table from these. */
export interface SummaryRow {
  readonly model: string;
  readonly check: CheckResult['name'];
  readonly status: CheckStatus;
  readonly durationMs: number;
  readonly detail: string;
}

export interface SummaryOptions {
  /**
   * Wraps the text of a status cell (`PASS`, `FAIL`, `SKIP`, `INFO`) and of the final verdict; the
   * CLI colours them here (on a TTY, unless NO_COLOR). Padding is computed before the call, so
   * escape codes do not shift the columns. Default: no change.
   */
  readonly colorStatus?: (status: CheckStatus, text: string) => string;
  /** Cut table lines to this many columns (the terminal width); default: no cut. */
  readonly width?: number;
}

/** The label of the stack endpoint's rows, in place of a model's name. */
export function endpointLabel(endpoint: { readonly name: string; readonly namespace: string }): string {
  return `endpoint ${endpoint.namespace}/${endpoint.name}`;
}

/** What a check of the endpoint is about: the model (or adapter) it names, if any. */
function aboutModel(check: CheckResult): string {
  const model = check.data.model;
  return typeof model === 'string' ? `"${model}": ` : '';
}

/** Each model's checks, then the endpoint's (labelled, each per-model check with its model's name). */
function sections(result: VerifyResult): { label: string; checks: readonly CheckResult[]; detail: (c: CheckResult) => string }[] {
  return [
    ...result.models.map((m) => ({ label: m.name, checks: m.checks, detail: (c: CheckResult) => c.message })),
    ...(result.endpoint ? [{ label: endpointLabel(result.endpoint), checks: result.endpoint.checks, detail: (c: CheckResult) => `${aboutModel(c)}${c.message}` }] : []),
  ];
}

/** The rows of the summary table, in run order (the stack endpoint's last). */
export function summaryRows(result: VerifyResult): SummaryRow[] {
  return sections(result).flatMap((s) => s.checks.map((c) => ({ model: s.label, check: c.name, status: c.status, durationMs: c.durationMs, detail: s.detail(c) })));
}

/** `cluster context kind-kind (~/.kube/config), port-forward` or `base URL http://…`. */
export function describeTarget(target: VerifyTarget): string {
  return target.mode === 'base-url'
    ? `base URL ${target.baseUrl}`
    : `${target.context ? `cluster context ${target.context}` : 'cluster'} (${target.source}), ${target.endpoints}`;
}

/**
 * The human report: a table of every check, then the failures with what was expected, what came
 * back and the likely cause, then the latency probes, then the verdict. Plain text; see
 * {@link SummaryOptions.colorStatus} for colour.
 */
export function formatSummary(result: VerifyResult, options: SummaryOptions = {}): string {
  const color = options.colorStatus ?? ((_: CheckStatus, text: string) => text);
  const cut = (line: string) => (options.width && line.length > options.width ? `${line.slice(0, Math.max(10, options.width - 1))}…` : line);
  const lines: string[] = [];
  lines.push(`app-serving verify: stack ${result.stack}, ${describeTarget(result.target)}`);
  lines.push('');
  const rows = summaryRows(result);
  if (rows.length === 0) {
    lines.push('No model to verify.');
  } else {
    const modelWidth = Math.max(5, ...rows.map((r) => r.model.length));
    const checkWidth = Math.max(5, ...rows.map((r) => r.check.length));
    const timeWidth = Math.max(4, ...rows.map((r) => formatMs(r.durationMs).length));
    const header = `${'MODEL'.padEnd(modelWidth)}  ${'CHECK'.padEnd(checkWidth)}  STATUS  ${'TIME'.padStart(timeWidth)}  DETAIL`;
    lines.push(cut(header));
    let previous = '';
    for (const row of rows) {
      const model = row.model === previous ? '' : row.model;
      previous = row.model;
      const head = `${model.padEnd(modelWidth)}  ${row.check.padEnd(checkWidth)}  `;
      const tail = `  ${formatMs(row.durationMs).padStart(timeWidth)}  ${row.detail}`;
      const status = row.status.toUpperCase().padEnd(6);
      const line = cut(head + status + tail);
      // Colour the status cell only, after cutting (the cut never reaches it: it is near the start).
      lines.push(line.length >= head.length + status.length ? line.slice(0, head.length) + color(row.status, status) + line.slice(head.length + status.length) : line);
    }
  }

  const failures = sections(result).flatMap((s) => s.checks.filter((c) => c.failure).map((c) => ({ model: `${s.label}${typeof c.data.model === 'string' ? ` (${c.data.model})` : ''}`, check: c })));
  if (failures.length) {
    lines.push('', 'Failures');
    for (const { model, check } of failures) {
      const f = check.failure!;
      lines.push(`  ${model} · ${check.name}`);
      lines.push(`    expected  ${f.expected}`);
      lines.push(`    got       ${f.got}`);
      if (f.body) lines.push(`    body      ${f.body}`);
      if (f.cause) lines.push(`    cause     ${f.cause}`);
      if (check.target) lines.push(`    target    ${check.target}`);
    }
  }

  const probes = result.models.filter((m) => m.load);
  if (probes.length) {
    lines.push('', `Latency probe (${LOAD_PROBE_LABEL})`);
    const table = [
      ['MODEL', 'REQ', 'CONC', 'OK', 'TTFT p50', 'TTFT p95', 'E2E p50', 'E2E p95', 'TOK/S'],
      ...probes.map((m) => {
        const p = m.load!;
        const ms = (v: number | undefined) => (v === undefined ? '-' : formatMs(v));
        return [m.name, String(p.requests), String(p.concurrency), String(p.succeeded), ms(p.ttftMs?.p50), ms(p.ttftMs?.p95), ms(p.e2eMs?.p50), ms(p.e2eMs?.p95), p.outputTokensPerSecond === null ? '-' : `${p.outputTokensPerSecond}${p.tokenCount === 'chunks' ? '*' : ''}`];
      }),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    for (const row of table) lines.push(cut(`  ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`));
    if (probes.some((m) => m.load!.tokenCount === 'chunks')) lines.push('  * tokens counted as streamed content chunks (the server sent no usage)');
  }

  const c = result.counts;
  const verdict = result.ok ? color('pass', 'PASSED') : color('fail', 'FAILED');
  const parts = [`${c.pass} passed`, `${c.fail} failed`, `${c.skip} skipped`, ...(c.info ? [`${c.info} info`] : [])];
  lines.push('', `${verdict}: ${parts.join(', ')} (${result.models.length} model${result.models.length === 1 ? '' : 's'}${result.endpoint ? ' and the endpoint' : ''}, ${formatMs(result.durationMs)})${result.deadlineExceeded ? ' — the run hit its deadline' : ''}`);
  return `${lines.join('\n')}\n`;
}

/** The `--json` output: the result as pretty JSON (see the README for the contract). */
export function formatJson(result: VerifyResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

/**
 * JUnit XML for CI systems: one `<testsuite>` per model (`<stack>/<model>`), one `<testcase>` per
 * check (`name` = the check name, `classname` = `app-serving.verify.<stack>.<model>`). `fail` →
 * `<failure>` with expected / got / cause / body; `skip` → `<skipped>`; `pass` and `info` pass, with
 * the message in `<system-out>`.
 */
export function formatJunit(result: VerifyResult): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const total = result.models.reduce((n, m) => n + m.checks.length, 0) + (result.endpoint?.checks.length ?? 0);
  out.push(
    `<testsuites name="${xml(`app-serving verify ${result.stack}`)}" tests="${total}" failures="${result.counts.fail}" errors="0" skipped="${result.counts.skip}" time="${seconds(result.durationMs)}">`,
  );
  for (const model of result.models) {
    const failures = model.checks.filter((c) => c.status === 'fail').length;
    const skips = model.checks.filter((c) => c.status === 'skip').length;
    out.push(
      `  <testsuite name="${xml(`${result.stack}/${model.name}`)}" tests="${model.checks.length}" failures="${failures}" errors="0" skipped="${skips}" time="${seconds(model.durationMs)}" timestamp="${xml(result.startedAt)}">`,
    );
    out.push('    <properties>');
    for (const [name, value] of [
      ['platform', model.platform],
      ['category', model.category],
      ['namespace', model.namespace],
      ['servedModelName', model.servedModelName],
    ] as const) {
      out.push(`      <property name="${name}" value="${xml(value)}"/>`);
    }
    out.push('    </properties>');
    for (const check of model.checks) {
      const open = `    <testcase name="${xml(check.name)}" classname="${xml(`app-serving.verify.${result.stack}.${model.name}`)}" time="${seconds(check.durationMs)}"`;
      if (check.status === 'fail') {
        const f = check.failure!;
        const text = [`expected: ${f.expected}`, `got: ${f.got}`, f.body ? `body: ${f.body}` : null, f.cause ? `cause: ${f.cause}` : null, check.target ? `target: ${check.target}` : null]
          .filter(Boolean)
          .join('\n');
        out.push(`${open}>`, `      <failure message="${xml(check.message)}" type="${xml(check.name)}">${xml(text)}</failure>`, '    </testcase>');
      } else if (check.status === 'skip') {
        out.push(`${open}>`, `      <skipped message="${xml(check.message)}"/>`, '    </testcase>');
      } else {
        out.push(`${open}>`, `      <system-out>${xml(`${check.status.toUpperCase()}: ${check.message}`)}</system-out>`, '    </testcase>');
      }
    }
    if (model.load) {
      out.push(`    <system-out>${xml(`${LOAD_PROBE_LABEL}: ${JSON.stringify(model.load)}`)}</system-out>`);
    }
    out.push('  </testsuite>');
  }
  if (result.endpoint) {
    const endpoint = result.endpoint;
    const label = endpointLabel(endpoint);
    const failures = endpoint.checks.filter((c) => c.status === 'fail').length;
    const skips = endpoint.checks.filter((c) => c.status === 'skip').length;
    out.push(`  <testsuite name="${xml(`${result.stack}/${label}`)}" tests="${endpoint.checks.length}" failures="${failures}" errors="0" skipped="${skips}" time="${seconds(endpoint.durationMs)}" timestamp="${xml(result.startedAt)}">`);
    out.push('    <properties>', `      <property name="class" value="${xml(endpoint.class)}"/>`, `      <property name="namespace" value="${xml(endpoint.namespace)}"/>`, '    </properties>');
    for (const check of endpoint.checks) {
      const name = typeof check.data.model === 'string' ? `${check.name} ${check.data.model}` : check.name;
      const open = `    <testcase name="${xml(name)}" classname="${xml(`app-serving.verify.${result.stack}.endpoint`)}" time="${seconds(check.durationMs)}"`;
      if (check.status === 'fail') {
        const f = check.failure!;
        const text = [`expected: ${f.expected}`, `got: ${f.got}`, f.body ? `body: ${f.body}` : null, f.cause ? `cause: ${f.cause}` : null, check.target ? `target: ${check.target}` : null].filter(Boolean).join('\n');
        out.push(`${open}>`, `      <failure message="${xml(check.message)}" type="${xml(check.name)}">${xml(text)}</failure>`, '    </testcase>');
      } else if (check.status === 'skip') {
        out.push(`${open}>`, `      <skipped message="${xml(check.message)}"/>`, '    </testcase>');
      } else {
        out.push(`${open}>`, `      <system-out>${xml(`${check.status.toUpperCase()}: ${check.message}`)}</system-out>`, '    </testcase>');
      }
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

/**
 * JUnit XML for a run that stopped before any check (the kubeconfig could not be loaded, or its
 * credential plugin failed): one failing test case named after the error's code, so a CI system that
 * reads the report sees the failure instead of no results. `message` is printed as is: pass the text
 * the command printed (already free of secrets).
 */
export function formatErrorJunit(command: 'verify' | 'preflight', stack: string, error: { readonly code: string; readonly message: string }, startedAt: Date = new Date()): string {
  const name = xml(`app-serving ${command} ${stack}`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${name}" tests="1" failures="1" errors="0" skipped="0" time="0.000">`,
    `  <testsuite name="${name}" tests="1" failures="1" errors="0" skipped="0" time="0.000" timestamp="${xml(startedAt.toISOString())}">`,
    `    <testcase name="${xml(error.code)}" classname="${xml(`app-serving.${command}.${stack}`)}" time="0.000">`,
    `      <failure message="${xml(error.message)}" type="${xml(error.code)}">${xml(`${command} stopped before any check: ${error.message}`)}</failure>`,
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** Escapes text for XML attributes and content; drops characters XML 1.0 cannot carry. */
export function xml(text: string): string {
  return (
    text
      .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
      // Bidirectional and zero-width characters as character references: none raw in the file.
      .replace(/[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g, (c) => `&#x${c.charCodeAt(0).toString(16)};`)
  );
}

/** One plain line per notable event, for a non-TTY progress log (CI); null for events not worth a line. */
export function describeEvent(event: VerifyEvent): string | null {
  switch (event.type) {
    case 'run-start':
      return `verifying ${event.models.length} model${event.models.length === 1 ? '' : 's'} of stack ${event.stack} via ${describeTarget(event.target)}`;
    case 'check-retry':
      return `${event.model} ${event.check}: not yet (${event.message}); retry ${event.attempt + 1} in ${formatMs(event.retryInMs)}`;
    case 'check-end':
      return `${event.model} ${event.result.name}: ${event.result.status.toUpperCase()} ${event.result.message} (${formatMs(event.result.durationMs)})`;
    case 'model-end':
      return `${event.result.name}: ${event.result.ok ? 'ok' : 'FAILED'} (${formatMs(event.result.durationMs)})`;
    default:
      return null;
  }
}
