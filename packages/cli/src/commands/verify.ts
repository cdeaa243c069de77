import { checkExistingFile, checkWritableFile } from '../paths.ts';
import { createSpinner } from 'nanospinner';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { clusterCommandError, writeJunitReport } from './cluster-report.ts';
import { EXIT, UsageError } from '../errors.ts';
import { safeText, type Output } from '../output.ts';

interface VerifyCommandOptions extends StackOptions {
  readonly json?: boolean;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly baseUrl?: string;
  readonly endpointUrl?: string;
  readonly endpoint?: boolean;
  readonly model?: string[];
  readonly wait?: string;
  readonly timeout?: string;
  readonly deadline?: string;
  readonly load?: string;
  readonly concurrency?: string;
  readonly junit?: string;
}

/** The environment variable holding a bearer token for `--base-url` endpoints that need one (never printed). */
export const TOKEN_ENV = 'APP_SERVING_VERIFY_TOKEN';

/**
 * `app-serving verify`: smoke-tests every enabled model of a deployed stack and exits 0 only if
 * every required check passed. Progress on a TTY; a summary table, `--json` or `--junit`.
 */
export default async function verify({ options, output }: { options: VerifyCommandOptions; output: Output }): Promise<number> {
  const { plan } = loadAndPlan(options);
  // The Kubernetes client is loaded only by this command.
  const kv = await import('@app-serving/k8s-verify');
  const duration = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    try {
      return kv.parseDuration(value);
    } catch (error) {
      const tooLong = error instanceof RangeError && /too long/.test(error.message);
      throw new UsageError(`--${flag} ${JSON.stringify(value)}: ${tooLong ? 'too long: at most 24 days (596h) can be timed' : 'give a duration such as 30s, 10m or 1h30m'}`);
    }
  };
  const count = (flag: string, value: string | undefined, max: number) => {
    if (value === undefined) return undefined;
    if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > max) throw new UsageError(`--${flag} ${JSON.stringify(value)}: give a whole number from 1 to ${max}`);
    return Number(value);
  };
  const requests = count('load', options.load, kv.MAX_LOAD_REQUESTS);
  const concurrency = count('concurrency', options.concurrency, kv.MAX_LOAD_CONCURRENCY) ?? 4;
  const timeoutMs = duration('timeout', options.timeout ?? '30s')!;
  const waitMs = duration('wait', options.wait);
  const deadlineMs = duration('deadline', options.deadline ?? '15m')! + (waitMs ?? 0);
  if (deadlineMs > kv.MAX_DURATION_MS) throw new UsageError('--deadline plus --wait is too long: at most 24 days (596h) can be timed');
  // The report file is checked before any check runs: a bad path must not cost a whole run.
  if (options.junit !== undefined) checkWritableFile('--junit', options.junit);
  if (options.kubeconfig !== undefined) checkExistingFile('--kubeconfig', options.kubeconfig);
  const token = process.env[TOKEN_ENV];

  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted (Ctrl-C)'));
  process.once('SIGINT', onSigint);
  const progress = !options.json && output.tty ? createSpinner('connecting', { stream: process.stderr }).start() : undefined;
  let done = 0;
  let total = 0;
  try {
    const result = await kv.verifyPlan(plan, {
      ...(options.baseUrl !== undefined && { baseUrl: options.baseUrl }),
      ...(options.endpointUrl !== undefined && { endpointUrl: options.endpointUrl }),
      ...(options.endpoint === false && { endpoint: false }),
      ...(options.baseUrl !== undefined && token && { headers: { Authorization: `Bearer ${token}` } }),
      // Models with access get it in the form their gateway checks (apiKeys: HTTP Basic of <name>:<key>), through the cluster too.
      ...(token && { token }),
      ...(options.kubeconfig !== undefined && { kubeconfig: options.kubeconfig }),
      ...(options.context !== undefined && { context: options.context }),
      ...(options.model !== undefined && { models: options.model }),
      ...(waitMs !== undefined && { waitMs }),
      timeoutMs,
      deadlineMs,
      ...(requests !== undefined && { load: { requests, concurrency } }),
      signal: controller.signal,
      onProgress: (event) => {
        if (event.type === 'run-start') total = event.models.length;
        if (event.type === 'model-end') done += 1;
        if (progress) {
          const line = kv.describeEvent(event);
          if (line && event.type !== 'model-end') progress.update({ text: safeText(`[${done}/${total} models] ${line}`, false) });
        } else if (!options.json && (event.type === 'check-end' || event.type === 'check-retry')) {
          // Not a terminal (CI logs): one line per finished check, as it happens.
          output.err(kv.describeEvent(event) ?? '');
        }
      },
    });
    progress?.stop();
    progress?.clear();
    // The result first: a report file that cannot be written must not lose it.
    if (options.json) output.raw(kv.formatJson(result));
    else {
      const { color: c } = output;
      const paint = { pass: c.green, fail: c.red, skip: c.yellow, info: c.cyan } as const;
      output.out(kv.formatSummary(result, { colorStatus: (status, text) => paint[status](text), ...(output.tty && process.stdout.columns && { width: process.stdout.columns }) }));
    }
    const reportFailed = writeJunitReport(output, options.junit, () => kv.formatJunit(result), options.json);
    if (reportFailed !== null) return reportFailed;
    return result.ok ? EXIT.ok : EXIT.problems;
  } catch (error) {
    progress?.stop();
    progress?.clear();
    return clusterCommandError(error, output, options.json, kv.isVerifyError, { file: options.junit, report: (e) => kv.formatErrorJunit('verify', plan.stack, e) });
  } finally {
    process.off('SIGINT', onSigint);
  }
}
