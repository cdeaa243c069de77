/** The repository's `models/` folder. */
export declare const MODELS_DIR: string;
/**
 * Deploys the stack's models (AppServing.fromConfig reads the project's `<project>:*` keys) and
 * returns the stack's outputs.
 */
export declare function appServingProgram(modelsDir?: string): {
    models: Readonly<Record<string, import("@app-serving/pulumi-components").ModelOutputs>>;
};
//# sourceMappingURL=program.d.ts.map