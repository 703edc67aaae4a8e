import { describe, expect, it } from 'vitest';
import { emptyParams } from '@/features/models/params';
import {
  buildRunBody,
  callsLine,
  combinations,
  expandedTargetCount,
  initialRunForm,
  newTarget,
  parseGridValues,
  percentToFraction,
  type RunForm,
  type TargetForm,
} from './config';

const target = (over: Partial<TargetForm> = {}): TargetForm => ({
  key: 't-x', modelId: 5, params: { ...emptyParams }, grid: [], promptId: null, promptVersionId: null, ...over,
});

describe('run configuration', () => {
  it('parses grid values, skipping blanks and duplicates, and refuses non-numbers', () => {
    expect(parseGridValues('temperature', '0.2, 0.7,1, ,0.7')).toEqual({ ok: true, values: [0.2, 0.7, 1] });
    expect(parseGridValues('max_tokens', '256, 1024')).toEqual({ ok: true, values: [256, 1024] });
    expect(parseGridValues('max_tokens', '256, 1.5')).toEqual({ ok: false, error: '"1.5" is not a whole number.' });
    expect(parseGridValues('temperature', 'hot')).toMatchObject({ ok: false });
    expect(parseGridValues('temperature', ' , ')).toMatchObject({ ok: false });
  });

  it('counts targets as the product of each grid and the line of calls', () => {
    const a = target({ grid: [{ key: 'g1', param: 'temperature', values: '0, 0.5, 1' }, { key: 'g2', param: 'max_tokens', values: '100,200' }] });
    const b = target({ key: 't-y', modelId: 6 });
    expect(combinations(a)).toBe(6);
    expect(expandedTargetCount([a, b])).toBe(7);
    expect(callsLine(7, 12, 2)).toBe('7 targets × 12 cases × 2 repeats = 168 calls');
    expect(callsLine(1, 1, 1)).toBe('1 target × 1 case × 1 repeat = 1 call');
  });

  it('turns percentages into fractions without drift', () => {
    expect(percentToFraction('80')).toBe(0.8);
    expect(percentToFraction('7.5')).toBe(0.075);
    expect(percentToFraction('100%')).toBe(1);
    expect(percentToFraction('4')).toBeNull();
    expect(percentToFraction('101')).toBeNull();
    expect(percentToFraction('abc')).toBeNull();
  });

  it('builds the body: dollars to micro-dollars through strings, overrides, grid and prompt version', () => {
    const form: RunForm = {
      ...initialRunForm,
      name: ' Nightly ',
      datasetId: 4,
      targets: [
        target({
          params: { ...emptyParams, temperature: '0.3', seed: '42' },
          grid: [{ key: 'g1', param: 'temperature', values: '0.1, 0.9' }],
          promptVersionId: 31,
        }),
      ],
      repeats: '2',
      concurrency: '8',
      budget: '0.29',
      alertPercent: '85',
      timeout: '30',
      maxRetries: '0',
    };
    const { body, errors } = buildRunBody(form);
    expect(errors).toEqual({});
    expect(body).toEqual({
      name: 'Nightly',
      dataset_id: 4,
      dataset_version_id: null,
      targets: [{ model_id: 5, params: { temperature: 0.3, seed: 42 }, prompt_version_id: 31, grid: { temperature: [0.1, 0.9] } }],
      repeats: 2,
      concurrency: 8,
      cache: true,
      stream: false,
      timeout_s: 30,
      max_retries: 0,
      max_history_pairs: 10,
      budget_micros: 290_000, // 0.29 * 1e6 in floating point is 289999.99999999994
      alert_threshold: 0.85,
    });
    expect(buildRunBody({ ...form, budget: '1234.567891' }).body?.budget_micros).toBe(1_234_567_891);
    expect(buildRunBody({ ...form, budget: '' }).body?.budget_micros).toBeNull();
    expect(buildRunBody({ ...form, maxRetries: '' }).body?.max_retries).toBeNull(); // the project's default
  });

  it('reports every field problem, and sends no targets for a traces dataset', () => {
    const bad: RunForm = {
      ...initialRunForm,
      targets: [target({ params: { ...emptyParams, max_tokens: 'lots' }, grid: [{ key: 'g9', param: 'temperature', values: 'x' }] })],
      repeats: '11',
      maxRetries: '11',
      budget: '1.0000001',
      alertPercent: '2',
    };
    const { body, errors } = buildRunBody(bad);
    expect(body).toBeNull();
    expect(errors).toMatchObject({
      dataset: 'Choose a dataset.',
      't-x.max_tokens': 'Enter a whole number.',
      g9: '"x" is not a number.',
      repeats: 'A whole number from 1 to 10.',
      maxRetries: "A whole number from 0 to 10, or empty for the project's default.",
      alertPercent: 'A percentage from 5 to 100.',
    });
    expect(errors.budget).toMatch(/6 decimals/);
    expect(buildRunBody({ ...initialRunForm, datasetId: 4 }).errors.targets).toBe('Add at least one model.');
    expect(buildRunBody({ ...initialRunForm, datasetId: 4 }, { kind: 'traces' }).body?.targets).toEqual([]);
    const many = target({ grid: [{ key: 'g1', param: 'seed', values: Array.from({ length: 51 }, (_, i) => i).join(',') }] });
    expect(buildRunBody({ ...initialRunForm, datasetId: 4, targets: [many] }).errors.targets).toBe('The grid expands into 51 targets; at most 50.');
  });
});

describe('buildRunBody, answer from documents', () => {
  const base = { ...initialRunForm, datasetId: 4, targets: [newTarget(5)] };
  const rag = { enabled: true, documentIds: [7], topK: '3', template: 'C: {{ context }} Q: {{question}}' };
  it('sends rag only when on, and never for a traces dataset', () => {
    expect(buildRunBody(base).body).not.toHaveProperty('rag');
    expect(buildRunBody({ ...base, rag }).body?.rag).toEqual({ document_ids: [7], top_k: 3, template: 'C: {{ context }} Q: {{question}}' });
    expect(buildRunBody({ ...base, rag }, { kind: 'traces' }).body).not.toHaveProperty('rag');
    expect(buildRunBody({ ...base, rag: { ...rag, enabled: false, documentIds: [] } }).body).not.toHaveProperty('rag');
  });
  it('names each bad field as the API does', () => {
    const { body, errors } = buildRunBody({ ...base, rag: { enabled: true, documentIds: [], topK: '0', template: '{{context}}' } });
    expect(body).toBeNull();
    expect(errors).toMatchObject({
      'rag.document_ids': 'Choose at least one document.',
      'rag.top_k': 'A whole number from 1 to 20.',
      'rag.template': 'The template must hold {{question}}.',
    });
  });
});
