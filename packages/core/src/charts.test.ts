import { describe, expect, it } from 'vitest';
import { chartRefProblem } from './charts.ts';

describe('chartRefProblem', () => {
  it('accepts the pinned forms: a name with its repository, an oci:// reference, a local folder', () => {
    expect(chartRefProblem({ chart: 'llm-d-infra', version: 'v1.3.10', repo: 'https://llm-d-incubation.github.io/llm-d-infra/' })).toBeUndefined();
    expect(chartRefProblem({ chart: 'oci://registry.k8s.io/x/inferencepool', version: 'v1.2.0' })).toBeUndefined();
    expect(chartRefProblem({ chart: './charts/llm-d-infra', version: 'v1.3.10' })).toBeUndefined();
  });

  it('says which field to fix', () => {
    expect(chartRefProblem({ chart: 'llm-d-infra', version: 'v1' })).toEqual({ key: 'repo', message: expect.stringMatching(/^is required: "llm-d-infra" is a chart name/) });
    expect(chartRefProblem({ chart: 'oci://r/c', version: 'v1', repo: 'https://x' })).toEqual({ key: 'repo', message: expect.stringMatching(/^must not be set for an oci:\/\/ chart/) });
    expect(chartRefProblem({ chart: '/srv/charts/c', version: 'v1', repo: 'https://x' })?.key).toBe('repo');
    expect(chartRefProblem({ chart: '', version: 'v1' })?.key).toBe('chart');
    expect(chartRefProblem({ chart: 'oci://r/c', version: '' })?.key).toBe('version');
  });
});
