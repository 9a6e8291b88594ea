/**
 * TEST DOUBLE of `lake build` in the Lean project of ScienceBoard's VM (/home/user/sci, Mathlib
 * loaded), which the VM server's /lean/check runs after finding the theorem's header line in
 * Sci/Basic.lean (vm_config/server.py; the check passes when the build exits 0 and does not say
 * "declaration uses 'sorry'"). No Lean toolchain runs here, so it cannot elaborate a proof: a
 * proof the test lists as accepted builds, `sorry` (or `admit`) left in the file builds with
 * Lean's warning, and anything else fails with an error, as an unfinished or wrong proof does.
 */

export interface LeanDouble {
  /** Proof bodies (the text that replaced `sorry`) that build. */
  readonly accepted: Set<string>;
  readonly builds: string[];
  /** `lake build` of the project whose Sci/Basic.lean holds `basicLean`. */
  lake(basicLean: string): { returncode: number; stdout: string };
}

export function leanDouble(accepted: Iterable<string> = []): LeanDouble {
  const builds: string[] = [];
  const self: LeanDouble = {
    accepted: new Set(accepted),
    builds,
    lake(text) {
      builds.push(text);
      const proofs = [...text.matchAll(/:= by\n([\s\S]*?)(?=\n(?:theorem|lemma|def|open|import|example)\b|\s*$)/g)].map((m) => (m[1] ?? '').trim());
      if (proofs.some((proof) => /\b(sorry|admit)\b/.test(proof))) {
        return { returncode: 0, stdout: "⚠ [2/3] Building Sci.Basic\nwarning: ./././Sci/Basic.lean: declaration uses 'sorry'\nBuild completed successfully.\n" };
      }
      const wrong = proofs.find((proof) => !self.accepted.has(proof));
      if (wrong !== undefined) {
        return { returncode: 1, stdout: `✖ [2/3] Building Sci.Basic\nerror: ./././Sci/Basic.lean: unsolved goals or unknown tactic in ${JSON.stringify(wrong.slice(0, 80))}\nerror: build failed\n` };
      }
      return { returncode: 0, stdout: 'Build completed successfully.\n' };
    },
  };
  return self;
}
