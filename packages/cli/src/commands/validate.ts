import { formatIssue, groupDigits, openModelsWarning, summarizeNames, SUMMARY_NAMES, type DeploymentPlan, type Issue } from '@app-serving/core';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { EXIT } from '../errors.ts';
import { issueJson } from '../main.ts';
import { foldRepeated, repeatedSuffix } from '../repeated.ts';
import type { Output } from '../output.ts';

/** `app-serving validate`: every problem of the stack in one pass, one line each. */
export default async function validate({ options, output }: { options: StackOptions & { json?: boolean }; output: Output }): Promise<number> {
  const { plan, config } = loadAndPlan(options);
  // Once per stack: the models anyone who reaches their gateway may call, because the stack says nothing.
  const open = openModelsWarning(config);
  const warnings = open ? [...plan.warnings, open] : plan.warnings;
  if (options.json) {
    output.json({ ok: true, stack: plan.file, models: plan.models.map((m) => m.name), issues: [], warnings: warnings.map(issueJson) });
    return EXIT.ok;
  }
  printWarnings(warnings, output);
  output.out(`${output.color.green('ok')} ${plan.file}: ${describeModels(plan)}`);
  return EXIT.ok;
}

/**
 * Warnings on stderr, so that stdout holds only the result. A warning repeated in many models'
 * files prints once with a count and the first names (`--json` keeps each one).
 */
export function printWarnings(warnings: readonly Issue[], output: Output): void {
  for (const line of foldRepeated(warnings)) output.err(`${output.color.yellow('warning:')} ${formatIssue(line.issue)}${repeatedSuffix(line)}`);
}

/** `2 models (generative/A, embedder/B)`; past four models, the first three and a count (`--json` lists all). */
function describeModels(plan: DeploymentPlan): string {
  if (plan.models.length === 0) return 'no enabled model';
  const names = plan.models.map((m) => `${m.category}/${m.name}`);
  const shown = names.length > SUMMARY_NAMES + 1 ? summarizeNames(names) : names.join(', ');
  return `${groupDigits(plan.models.length)} ${plan.models.length === 1 ? 'model' : 'models'} (${shown})`;
}
