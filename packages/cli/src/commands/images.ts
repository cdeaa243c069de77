import { DEFAULT_MIRROR_PROJECT, mirrorSteps, mirrorTargetProblem, parseImage, shellCommand, type MirrorStep } from '@app-serving/core';
import { join } from 'node:path';
import { loadAndPlan, type StackOptions } from '../context.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { Output } from '../output.ts';
import { printWarnings } from './validate.ts';

interface ImagesOptions extends StackOptions {
  readonly json?: boolean;
  readonly mirrorTo?: string;
  readonly archiveDir?: string;
}

/**
 * `app-serving images`: every image the stack pulls, and the skopeo commands that put each one
 * in Harbor for an air-gapped cluster (directly, or through oci-archive files).
 */
export default async function images({ options, output }: { options: ImagesOptions; output: Output }): Promise<number> {
  const mirrorProblem = options.mirrorTo === undefined ? null : mirrorTargetProblem(options.mirrorTo);
  if (mirrorProblem) throw new UsageError(`--mirror-to ${JSON.stringify(options.mirrorTo)}: ${mirrorProblem}`);
  const { plan } = loadAndPlan(options);
  const mirror = options.mirrorTo ?? (plan.harbor ? `${plan.harbor.hostname}/${DEFAULT_MIRROR_PROJECT}` : undefined);
  const steps = mirror ? mirrorSteps(plan.images, mirror) : [];
  const commands = steps.flatMap((step) => skopeoCommands(step, options.archiveDir));
  if (options.json) {
    output.json({
      stack: plan.file,
      mirror: mirror ?? null,
      images: plan.images.map((use, i) => ({ image: use.image, uses: use.uses, ...(steps[i] && { target: steps[i].target, source: steps[i].source, inHarbor: steps[i].inHarbor }) })),
      commands,
    });
    return EXIT.ok;
  }
  printWarnings(plan.warnings.filter((w) => w.code.startsWith('warning.image')), output);
  const { color: c } = output;
  output.out(c.bold(`${plan.images.length} images pulled by stack ${plan.stack}`));
  for (const use of plan.images) {
    output.out(`  ${use.image}`);
    for (const { model, where } of use.uses) output.out(c.dim(`      ${model}: ${where}`));
  }
  output.out('');
  // The gateway proxies' images are their controllers', per class of the llm-d models' Gateways.
  const classes = new Set(plan.models.flatMap((m) => (m.platform !== 'llm-d' ? [] : m.upstream === '2026-02' ? ['istio'] : m.router.gatewayClass === null ? [] : [m.router.gatewayClass])));
  if (classes.has('istio')) output.out(c.dim('  The Istio gateway proxy image comes from your Istio installation, not from this stack: mirror it with Istio.'));
  if (classes.has('agentgateway')) output.out(c.dim('  The agentgateway proxy image comes from your agentgateway installation, not from this stack: mirror it with agentgateway.'));
  if (classes.has('envoy')) {
    output.out(
      c.dim(
        "  The Envoy proxy image of the llm-d Gateways (class envoy) comes from your Envoy Gateway installation (v1.8.1: docker.io/envoyproxy/envoy:distroless-v1.38.1; its chart's global.images.envoyProxy.image), not from this stack: mirror it with Envoy Gateway.",
      ),
    );
  }
  if (plan.models.some((m) => m.platform === 'kserve')) {
    output.out(c.dim("  The images of KServe's controller, Envoy Gateway and Envoy AI Gateway come from their charts, not from this stack: mirror them with those charts."));
  }
  if (!mirror) {
    output.out(c.dim('  To mirror them into Harbor, pass --mirror-to <registry>/<project>.'));
    return EXIT.ok;
  }
  output.out('');
  output.out(c.bold(`Mirror into ${mirror} (app-serving's own images into ${mirror.split('/')[0]}/images-infra):`));
  for (const command of commands) output.out(command);
  return EXIT.ok;
}

/** The shell commands for one image: copy (through an archive when asked), or check it is in Harbor. Every argument is shell-quoted. */
export function skopeoCommands(step: MirrorStep, archiveDir?: string): string[] {
  if (step.source === null) {
    return [`# ${step.image.replace(/[\r\n]/g, ' ')} is named in Harbor already; copy it there from its upstream source, then check:`, `${shellCommand(['skopeo', 'inspect', '--raw', `docker://${step.target}`])} >/dev/null`];
  }
  if (archiveDir === undefined) return [shellCommand(['skopeo', 'copy', '--all', `docker://${step.source}`, `docker://${step.target}`])];
  const { repository, tag, digest } = parseImage(step.source);
  const file = join(archiveDir, `${repository.replace(/\//g, '_')}-${(tag ?? digest ?? 'latest').replace(/[^A-Za-z0-9._-]/g, '_')}.tar`);
  return [
    shellCommand(['skopeo', 'copy', '--all', `docker://${step.source}`, `oci-archive:${file}`]),
    shellCommand(['skopeo', 'copy', '--all', `oci-archive:${file}`, `docker://${step.target}`]),
  ];
}
