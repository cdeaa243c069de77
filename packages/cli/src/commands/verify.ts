import { writeFileSync } from 'node:fs';
import { displayPath } from '@app-serving/core';
import { createSpinner } from 'nanospinner';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { Output } from '../output.ts';

interface VerifyCommandOptions extends StackOptions {
  readonly json?: boolean;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly baseUrl?: string;
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
    } catch {
      throw new UsageError(`--${flag} ${value}: give a duration such as 30s, 10m or 1h30m`);
    }
  };
  const count = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`--${flag} ${value}: give a whole number ≥ 1`);
    return Number(value);
  };
  const requests = count('load', options.load);
  const concurrency = count('concurrency', options.concurrency) ?? 4;
  const token = process.env[TOKEN_ENV];

  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('interrupted (Ctrl-C)'));
  process.once('SIGINT', onSigint);
  const progress = !options.json && output.tty ? createSpinner('connecting', { stream: process.stderr }).start() : undefined;
  let done = 0;
  let total = 0;
  try {
    const waitMs = duration('wait', options.wait);
    const result = await kv.verifyPlan(plan, {
      ...(options.baseUrl !== undefined && { baseUrl: options.baseUrl }),
      ...(options.baseUrl !== undefined && token && { headers: { Authorization: `Bearer ${token}` } }),
      ...(options.kubeconfig !== undefined && { kubeconfig: options.kubeconfig }),
      ...(options.context !== undefined && { context: options.context }),
      ...(options.model !== undefined && { models: options.model }),
      ...(waitMs !== undefined && { waitMs }),
      timeoutMs: duration('timeout', options.timeout ?? '30s')!,
      deadlineMs: duration('deadline', options.deadline ?? '15m')! + (waitMs ?? 0),
      ...(requests !== undefined && { load: { requests, concurrency } }),
      signal: controller.signal,
      onProgress: (event) => {
        if (event.type === 'run-start') total = event.models.length;
        if (event.type === 'model-end') done += 1;
        if (progress) {
          const line = kv.describeEvent(event);
          if (line && event.type !== 'model-end') progress.update({ text: `[${done}/${total} models] ${line}` });
        } else if (!options.json && (event.type === 'check-end' || event.type === 'check-retry')) {
          // Not a terminal (CI logs): one line per finished check, as it happens.
          output.err(kv.describeEvent(event) ?? '');
        }
      },
    });
    progress?.stop();
    progress?.clear();
    if (options.junit !== undefined) {
      writeFileSync(options.junit, kv.formatJunit(result));
      if (!options.json) output.err(`wrote JUnit report ${displayPath(options.junit)}`);
    }
    if (options.json) process.stdout.write(kv.formatJson(result));
    else {
      const { color: c } = output;
      const paint = { pass: c.green, fail: c.red, skip: c.yellow, info: c.cyan } as const;
      output.out(kv.formatSummary(result, { colorStatus: (status, text) => paint[status](text), ...(output.tty && process.stdout.columns && { width: process.stdout.columns }) }));
    }
    return result.ok ? EXIT.ok : EXIT.problems;
  } catch (error) {
    progress?.stop();
    progress?.clear();
    if (kv.isVerifyError(error)) {
      if (error.code === 'kubeconfig') {
        if (options.json) output.json({ ok: false, error: { code: error.code, message: error.message } });
        else output.err(`${output.color.red('error:')} ${error.message}`);
        return EXIT.problems;
      }
      throw new UsageError(error.message);
    }
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
