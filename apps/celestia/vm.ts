import { z } from 'zod';
import { parsePythonJson } from '../../core/python-json';
import { infoCheck, sandboxChecks, type VmApp } from '../vm-app';

/**
 * Celestia on a ScienceBoard VM, as sci/Celestia/celestia.py and task.py run it: the modified
 * Celestia serves its state on the port its launch command got («PORTLIKE»); ScienceBoard's
 * VMManager reaches it at the VM's address with a 240 s timeout (the context's appTimeoutMs). Celestia has no funcs of its own
 * (`opt` is the VM server's, common to every app). After the stop one POST /dump, its body the
 * task's `query` list as raw JSON (`[]` without one), answers the dump every `info` check reads
 * with its `key` lambda and `pred` (equality by default), read in Python's JSON dialect (NaN and
 * Infinity are numbers) and handed to the predicate sandbox as Python's json.loads gives it.
 */

const dumpAnswer = z.record(z.string(), z.unknown());

export const celestiaVm: VmApp = {
  software: 'Celestia',
  session(task, { appHttp, predicates }) {
    return {
      initialize: async () => false,
      async ready(timeoutMs) {
        await appHttp.text({ method: 'GET', path: '/version', idempotent: true, timeoutMs, retries: 0 });
      },
      async evaluate(checks) {
        if (checks.length === 0) return [];
        const request = { method: 'POST', path: '/dump', text: JSON.stringify(task.query ?? []), idempotent: true } as const;
        const dump = await appHttp.json(request, dumpAnswer, parsePythonJson);
        return sandboxChecks(predicates, checks.map((c) => ({ ...c, python: infoCheck(c.check) })), dump, "Celestia's /dump");
      },
    };
  },
};
