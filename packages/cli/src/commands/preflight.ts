import { checkExistingFile, checkWritableFile } from '../paths.ts';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { clusterCommandError, writeJunitReport } from './cluster-report.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { Output } from '../output.ts';

interface PreflightCommandOptions extends StackOptions {
  readonly json?: boolean;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly timeout?: string;
  readonly deadline?: string;
  readonly junit?: string;
}

/**
 * `app-serving preflight`: checks, read-only, that the cluster has what the stack needs before
 * `pulumi up`. Exit 0 when every check passed (warnings allowed), 1 when one failed or could not
 * run, 2 on a usage error.
 */
export default async function preflight({ options, output }: { options: PreflightCommandOptions; output: Output }): Promise<number> {
  const { plan } = loadAndPlan(options);
  // The Kubernetes client is loaded only by the commands that use a cluster.
  const kv = await import('@app-serving/k8s-verify');
  const duration = (flag: string, value: string) => {
    try {
      return kv.parseDuration(value);
    } catch (error) {
      const tooLong = error instanceof RangeError && /too long/.test(error.message);
      throw new UsageError(`--${flag} ${JSON.stringify(value)}: ${tooLong ? 'too long: at most 24 days (596h) can be timed' : 'give a duration such as 10s, 1m or 1m30s'}`);
    }
  };
  const timeoutMs = duration('timeout', options.timeout ?? '10s');
  const deadlineMs = duration('deadline', options.deadline ?? '1m');
  if (options.junit !== undefined) checkWritableFile('--junit', options.junit);
  if (options.kubeconfig !== undefined) checkExistingFile('--kubeconfig', options.kubeconfig);

  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted (Ctrl-C)'));
  process.once('SIGINT', onSigint);
  try {
    const result = await kv.runPreflight(plan, {
      ...(options.kubeconfig !== undefined && { kubeconfig: options.kubeconfig }),
      ...(options.context !== undefined && { context: options.context }),
      timeoutMs,
      deadlineMs,
      signal: controller.signal,
    });
    if (options.json) output.raw(kv.formatPreflightJson(result));
    else {
      const { color: c } = output;
      const paint = { pass: c.green, fail: c.red, warn: c.yellow, skip: c.yellow } as const;
      output.out(kv.formatPreflight(result, { colorStatus: (status, text) => paint[status](text) }));
    }
    const reportFailed = writeJunitReport(output, options.junit, () => kv.formatPreflightJunit(result), options.json);
    if (reportFailed !== null) return reportFailed;
    return result.ok ? EXIT.ok : EXIT.problems;
  } catch (error) {
    return clusterCommandError(error, output, options.json, kv.isVerifyError, { file: options.junit, report: (e) => kv.formatErrorJunit('preflight', plan.stack, e) });
  } finally {
    process.off('SIGINT', onSigint);
  }
}
