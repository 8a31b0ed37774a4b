/**
 * A JSON Schema object, as the wire, the host and the author SDK carry it.
 *
 * @module
 */

/** A JSON Schema object. */
export type JsonSchema = Record<string, unknown>;
