import assert from 'node:assert/strict';
import { GRPO_LABEL_SCHEMA, parseGrpoLabel } from '../../core/training';

describe('GRPO labels read back from a row', () => {
  const label = {
    schema: GRPO_LABEL_SCHEMA,
    software: 'KAlgebra',
    manifestKey: 'coda/runs/r1/KAlgebra/A-01/0/manifest.json',
    step: 2,
    screenshotKey: 'coda/runs/r1/KAlgebra/A-01/0/steps/0001/screenshot.png',
    screen: { width: 1920, height: 1080 },
    action: { type: 'click', x: 10, y: 20 },
  };

  it('parses a label', () => {
    assert.deepEqual(parseGrpoLabel(JSON.stringify(label)), label);
  });

  it('says why a text is not a label, naming the field', () => {
    assert.equal(parseGrpoLabel('click the OK button'), 'label: not JSON');
    assert.match(parseGrpoLabel(JSON.stringify({ ...label, step: 0 })) as string, /^label: step: /);
    assert.match(parseGrpoLabel(JSON.stringify({ ...label, extra: 1 })) as string, /^label: \(root\): Unrecognized key: "extra"/);
  });
});
