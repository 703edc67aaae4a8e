import { describe, expect, it } from 'vitest';
import { emptyDraft, normalizeWeights, weightSum, detectVariables, gridSize } from './draft';
import { errorsForStep, firstStepWithError, formPath, mapServerErrors, stepOfField, validateStep } from './validation';
import { diffRows, diffStats, previewPatch } from './unifiedDiff';
import { reviewKeyAction } from './keys';
import { percentCI, signedCI, verdictLabel, withCI } from './numbers';
import { modelsOf, winRate, wilson } from './aggregate';
import { toConfig } from '../api';

const good = () => ({
  ...emptyDraft(),
  objective: 'Answer support questions kindly and exactly.',
  rubric: [
    { name: 'Helpfulness', description: 'Provides an actionable answer', weight: 0.6, scale_min: 0, scale_max: 5 },
    { name: 'Tone', description: 'Warm and professional voice', weight: 0.4, scale_min: 0, scale_max: 5 },
  ],
  prompt_text: 'You are a support agent. Answer the question {{question}} in two short paragraphs.',
});

describe('wizard validation', () => {
  it('accepts a valid objective and rejects a short one with its field', () => {
    expect(validateStep('objective', good())).toEqual({});
    expect(validateStep('objective', { ...good(), objective: 'too short' })).toHaveProperty('objective');
  });

  it('checks the rubric: weight sum, name charset, duplicates and description length', () => {
    expect(validateStep('rubric', good())).toEqual({});
    const d = good();
    d.rubric[1].weight = 0.3;
    expect(validateStep('rubric', d).rubric).toMatch(/sum to 1.0 \(now 0.90\)/);
    d.rubric[1] = { ...d.rubric[1], weight: 0.4, name: 'Tone!' };
    expect(validateStep('rubric', d)['rubric.1.name']).toMatch(/Letters/);
    d.rubric[1] = { ...d.rubric[1], name: 'helpfulness' };
    expect(validateStep('rubric', d)['rubric.1.name']).toMatch(/Two criteria/);
    d.rubric[1] = { ...d.rubric[1], name: 'Tone', description: 'short' };
    expect(validateStep('rubric', d)).toHaveProperty(['rubric.1.description']);
  });

  it('checks the prompt length and the tool JSON', () => {
    expect(validateStep('prompt', good())).toEqual({});
    expect(validateStep('prompt', { ...good(), prompt_text: 'x'.repeat(49) })).toHaveProperty('prompt_text');
    expect(validateStep('prompt', { ...good(), tools_schema: '{nope' }).tools_schema).toMatch(/not valid JSON/);
  });

  it('checks stop rules bounds', () => {
    const d = { ...good(), max_iterations: 0, max_spend_dollars: 'abc', convergence_window: 11 };
    const e = validateStep('stop', d);
    expect(Object.keys(e).sort()).toEqual(['convergence_window', 'max_iterations', 'max_spend_dollars']);
  });

  it('checks the rejection cap and sends it with the stop rules', () => {
    expect(validateStep('stop', good())).not.toHaveProperty('max_rejections');
    for (const bad of [0, 21, 2.5, NaN]) expect(validateStep('stop', { ...good(), max_rejections: bad })).toHaveProperty('max_rejections');
    const config = toConfig({ ...good(), max_rejections: 5 }) as { stop: Record<string, unknown> };
    expect(config.stop.max_rejections).toBe(5);
  });

  it('maps server field errors to the step that owns them', () => {
    const server = { 'rubric.0.weight': 'bad', 'stop_rules.max_iterations': 'too many', objective: 'short' };
    expect(stepOfField('stop_rules.max_iterations')).toBe('stop');
    expect(stepOfField('unknown')).toBeNull();
    expect(firstStepWithError(server)).toBe(0);
    expect(errorsForStep('stop', server)).toEqual({ 'stop_rules.max_iterations': 'too many' });
    expect(firstStepWithError({})).toBeNull();
  });

  it('maps the server configuration paths to form fields', () => {
    expect(formPath('config.rubric.criteria.1.weight')).toBe('rubric.1.weight');
    expect(formPath('rubric.criteria[1].weight')).toBe('rubric.1.weight');
    expect(formPath('objective.goal')).toBe('objective');
    expect(formPath('prompt.template')).toBe('prompt_text');
    expect(formPath('stop.max_budget_micros')).toBe('max_spend_dollars');
    expect(formPath('models.targets[0].params.temperature')).toBe('targets.0.temperature');
    expect(formPath('judges.pointwise[0]')).toBe('judge_model_ids');
    expect(formPath('data.dataset_version_id')).toBe('dataset_version_id');
    const mapped = mapServerErrors({ 'config.rubric': 'Weights must sum to 1', 'stop.max_iterations': 'Too many' });
    expect(mapped).toEqual({ rubric: 'Weights must sum to 1', max_iterations: 'Too many' });
    expect(firstStepWithError(mapped)).toBe(1);
  });
});

describe('draft helpers', () => {
  it('normalizes weights to sum exactly 1', () => {
    const r = normalizeWeights([0, 1, 2].map(() => ({ name: 'a', description: 'b', weight: 0.9, scale_min: 0, scale_max: 5 })));
    expect(r.map((c) => c.weight)).toEqual([0.33, 0.33, 0.34]);
    expect(weightSum(r)).toBe(1);
  });
  it('detects variables once each, in order', () => {
    expect(detectVariables('{{a}} and {{ b }} and {{a}}')).toEqual(['a', 'b']);
  });
  it('counts targets times the grid', () => {
    const d = { ...good(), targets: [{ model_config_id: 1, temperature: 1, max_tokens: 10 }, { model_config_id: 2, temperature: 1, max_tokens: 10 }] };
    expect(gridSize(d)).toBe(2);
    expect(gridSize({ ...d, grid_temperatures: [0.2, 0.7, 1.0], grid_max_tokens: [100, 200] })).toBe(12);
  });
});

describe('unified diff rendering', () => {
  const base = 'line one\nline two\nline three\n';
  const patch = '--- a/prompt\n+++ b/prompt\n@@ -1,3 +1,3 @@\n line one\n-line two\n+line 2, better\n line three\n';
  it('numbers old and new lines and counts changes', () => {
    const rows = diffRows(patch);
    expect(rows.map((r) => r.kind)).toEqual(['hunk', 'ctx', 'del', 'add', 'ctx']);
    expect(rows[2]).toMatchObject({ oldNo: 2, newNo: null, text: 'line two' });
    expect(rows[3]).toMatchObject({ oldNo: null, newNo: 2, text: 'line 2, better' });
    expect(rows[4]).toMatchObject({ oldNo: 3, newNo: 3 });
    expect(diffStats(rows)).toEqual({ added: 1, removed: 1 });
  });
  it('previews the patched prompt, or null when it does not apply', () => {
    expect(previewPatch(base, patch)).toBe('line one\nline 2, better\nline three\n');
    expect(previewPatch('something else\n', patch)).toBeNull();
  });
  it('shows text that is no diff as plain lines', () => {
    expect(diffRows('not a diff').map((r) => r.kind)).toEqual(['meta']);
  });
});

describe('review shortcuts', () => {
  const ev = (key: string, target: EventTarget | null = document.body, extra: Partial<KeyboardEvent> = {}) =>
    ({ key, target, ctrlKey: false, metaKey: false, altKey: false, repeat: false, defaultPrevented: false, ...extra }) as KeyboardEvent;
  it('maps . , E', () => {
    expect(reviewKeyAction(ev('.'))).toBe('approve');
    expect(reviewKeyAction(ev(','))).toBe('reject');
    expect(reviewKeyAction(ev('E'))).toBe('edit');
    expect(reviewKeyAction(ev('e'))).toBe('edit');
    expect(reviewKeyAction(ev('x'))).toBeNull();
  });
  it('ignores keys while typing, with modifiers, on repeat and in dialogs', () => {
    const ta = document.createElement('textarea');
    expect(reviewKeyAction(ev('.', ta))).toBeNull();
    const input = document.createElement('input');
    expect(reviewKeyAction(ev(',', input))).toBeNull();
    expect(reviewKeyAction(ev('.', document.body, { ctrlKey: true }))).toBeNull();
    expect(reviewKeyAction(ev('.', document.body, { repeat: true }))).toBeNull();
    const dlg = document.createElement('div');
    dlg.setAttribute('role', 'dialog');
    const btn = document.createElement('button');
    dlg.appendChild(btn);
    expect(reviewKeyAction(ev('.', btn))).toBeNull();
  });
});

describe('numbers with intervals', () => {
  it('formats values, deltas and rates', () => {
    expect(withCI(3.421, 3.1, 3.71)).toBe('3.42 [3.10, 3.71]');
    expect(withCI(null)).toBe('—');
    expect(signedCI(0.31, -0.05, 0.58)).toBe('+0.31 [−0.05, +0.58]');
    expect(percentCI(0.667, 0.55, 0.77)).toBe('67% [55%, 77%]');
  });
});

describe('aggregate reading', () => {
  it('reads per-model splits, deltas and the verdict of the paired comparison', () => {
    const ci = (mean: number) => ({ mean, low: mean - 0.1, high: mean + 0.1, n: 10 });
    const models = modelsOf({
      aggregate: {
        models: { 'Fake mini': { all: { composite: ci(0.6), criteria: { Empathy: ci(0.4) } }, refinement: { composite: ci(0.62), criteria: {} }, holdout: { composite: ci(0.55), criteria: {} } } },
        delta: { 'Fake mini': { all: { mean_difference: 0.05, low: -0.01, high: 0.11, verdict: 'not distinguishable' }, holdout: { mean_difference: 0.1, low: 0.02, high: 0.2, verdict: 'B better' } } },
        cases: { 'Fake mini': { '1': 0.5, '2': 0.7 } },
        win_rate: { 'Fake mini': { mean: 0.75, low: 0.5, high: 0.95, n: 2, source: 'pairwise' } },
        best_model: 'Fake mini',
      },
    });
    expect(models).toHaveLength(1);
    expect(models[0].all.composite.mean).toBe(0.6);
    expect(models[0].all.criteria.Empathy.low).toBeCloseTo(0.3);
    expect(models[0].delta).toMatchObject({ delta: 0.05, verdict: 'not distinguishable' });
    expect(verdictLabel(models[0].holdout_delta?.verdict)).toBe('Better');
    expect(verdictLabel('A better')).toBe('Worse');
    expect(models[0].cases).toEqual({ '1': 0.5, '2': 0.7 });
    expect(models[0].win_rate).toEqual({ mean: 0.75, low: 0.5, high: 0.95, n: 2, source: 'pairwise' });
    expect(modelsOf({ aggregate: { models: { m: {} } } })[0].win_rate).toBeNull();
    expect(modelsOf({ aggregate: null })).toEqual([]);
  });

  it('win rate counts ties half, on paired cases only, with a Wilson interval', () => {
    const w = winRate({ '1': 0.9, '2': 0.5, '3': 0.4, '4': 1 }, { '1': 0.5, '2': 0.5, '3': 0.6 });
    expect(w.mean).toBeCloseTo(0.5);
    expect(w.n).toBe(3);
    expect(w.low!).toBeGreaterThan(0);
    expect(w.high!).toBeLessThan(1);
    const all = wilson(10, 10);
    expect(all.high).toBe(1);
    expect(all.low!).toBeCloseTo(0.722, 2);
    expect(wilson(0, 0).mean).toBeNull();
  });
});
