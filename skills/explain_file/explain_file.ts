/**
 * `explain_file`: explains a source or config file for an agent or a
 * person new to it — its purpose, main parts, how it connects to its
 * neighbours, and anything surprising — or answers a question about it.
 *
 * It mixes the two things a code skill can reach: tools (`read_file` and
 * `list_dir` from the filesystem toolkit) and the host's LLM (`ctx.llm`).
 * The model may ask for up to `max_related` neighbouring files through a
 * `read_file` tool offered to it; the skill reads them through the same
 * sandboxed tool path and feeds them back.
 *
 * @module
 */

import type {
  ChatMessage,
  ChatToolCall,
  Context,
  Output,
  SkillDef,
} from "../../sandbox/sdk/types.ts";

interface Args {
  path: string;
  question?: string;
  max_related?: number;
}

/** Bytes of the file shown to the model. */
const FILE_BYTES = 60_000;
/** Bytes of each related file the model asks for. */
const RELATED_BYTES = 20_000;

/** The fields of a `read_file` result this skill reads. */
interface ReadPage {
  path: string;
  content: string;
  truncated: boolean;
  end_line: number;
}

export default {
  kind: "skill",
  name: "explain_file",
  version: "1.0.0",
  description:
    "Explain what a file does — purpose, main parts, how it fits with its neighbours, pitfalls — or answer a question about it. Reads the file (and related files the model asks for) through the filesystem toolkit.",
  triggers: [
    "explain this file",
    "what does this file do",
    "how does this module work",
  ],
  when_to_use:
    "When an agent must understand an unfamiliar file before changing it, or a user asks what some code or config does.",
  argument_hint:
    '{"path": "src/server.ts", "question": "How are requests authenticated?"}',
  category: "code",
  tags: ["code", "explain", "llm"],
  tools: ["read_file", "list_dir"],
  max_turns: 4,
  timeout_seconds: 180,
  input_schema: {
    type: "object",
    properties: {
      path: {
        type: "string",
        description: "File to explain, relative to the filesystem root",
      },
      question: {
        type: "string",
        description: "A specific question to answer instead of a general tour",
      },
      max_related: {
        type: "integer",
        minimum: 0,
        maximum: 5,
        description: "Most related files the model may read (default 2)",
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
  output_schema: {
    type: "object",
    required: ["path", "explanation", "files_read"],
    properties: {
      path: { type: "string" },
      explanation: { type: "string" },
      files_read: { type: "array", items: { type: "string" } },
      truncated: { type: "boolean" },
    },
  },
  async run(args: Args, ctx: Context): Promise<Output> {
    ctx.status(`Reading "${args.path}"`);
    // The host hands a code skill the tool's data, not its output marker.
    const page = await ctx.tools.call("read_file", {
      path: args.path,
      max_bytes: FILE_BYTES,
      line_numbers: true,
    }) as ReadPage;
    ctx.progress(20, `Read ${page.end_line} lines`);
    const neighbours = await listNeighbours(ctx, args.path);
    ctx.progress(30, "Asking the model");

    const maxRelated = args.max_related ?? 2;
    const reads: Reads = {
      files: [page.path ?? args.path],
      related: 0,
      max: maxRelated,
    };
    const messages: ChatMessage[] = [{
      role: "user",
      content: firstPrompt(args, page, neighbours),
    }];
    const system =
      "You explain code and configuration files precisely and briefly, in Markdown, citing line numbers. " +
      (maxRelated > 0
        ? `If a related file is needed to answer well, call read_file on it (at most ${maxRelated}). Otherwise answer directly.`
        : "Answer directly from the file shown.");

    while (true) {
      const offerTools = reads.related < maxRelated;
      const response = await ctx.llm.chat({
        system,
        messages,
        tools: offerTools ? [READ_FILE_TOOL] : undefined,
      });
      if (response.tool_calls.length === 0 || !offerTools) {
        ctx.progress(100, "Explained");
        return {
          __skillbox_output: true,
          data: {
            path: args.path,
            explanation: response.text.trim(),
            files_read: reads.files,
            truncated: page.truncated,
          },
          summary: firstLine(response.text),
        };
      }
      messages.push({
        role: "assistant",
        content: response.text,
        tool_calls: response.tool_calls,
      });
      for (const call of response.tool_calls) {
        const content = await readRelated(ctx, call, reads);
        messages.push({ role: "tool", tool_call_id: call.id, content });
      }
      ctx.progress(
        30 + 20 * reads.related,
        `Read ${reads.related} related file(s)`,
      );
    }
  },
} satisfies SkillDef<Args>;

/** The tool offered to the model for reading a related file. */
const READ_FILE_TOOL = {
  name: "read_file",
  description: "Read a related file, relative to the filesystem root",
  input_schema: {
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
  },
};

/** The files read so far, and how many related ones the model may have. */
interface Reads {
  /** The paths read, the explained file first. */
  files: string[];
  /** Related files read (or tried). */
  related: number;
  /** The most related files the model may read. */
  max: number;
}

/**
 * The other files in the explained file's folder: the listing lets the
 * model name real neighbours, not guesses. Empty (and logged) when the
 * folder cannot be listed.
 */
async function listNeighbours(ctx: Context, path: string): Promise<string[]> {
  const folder = path.includes("/")
    ? path.slice(0, path.lastIndexOf("/"))
    : ".";
  try {
    const listing = await ctx.tools.call("list_dir", {
      path: folder,
      max_entries: 100,
    }) as { entries?: { path: string; type: string }[] };
    return (listing.entries ?? []).filter((e) => e.type === "file")
      .map((e) => e.path);
  } catch (error) {
    ctx.log("warn", `Cannot list "${folder}": ${messageOf(error)}`);
    return [];
  }
}

/** The first user message: the file, its neighbours, and what to answer. */
function firstPrompt(args: Args, page: ReadPage, neighbours: string[]): string {
  return [
    `File: ${args.path}${
      page.truncated ? ` (first ${page.end_line} lines only)` : ""
    }`,
    "```",
    page.content,
    "```",
    neighbours.length > 0
      ? `Files in the same folder: ${neighbours.join(", ")}`
      : "",
    args.question
      ? `Question: ${args.question}`
      : "Explain this file: its purpose, its main parts, how it connects to the files around it, and anything surprising or risky.",
  ].filter(Boolean).join("\n");
}

/**
 * Answers one tool call of the model: the related file's text while the
 * model may read more, else (or for another tool) an error telling it to
 * answer now.
 */
async function readRelated(
  ctx: Context,
  call: ChatToolCall,
  reads: Reads,
): Promise<string> {
  if (call.name !== "read_file" || reads.related >= reads.max) {
    return "Error: no more files may be read; answer now.";
  }
  reads.related++;
  // The model's arguments are untrusted: they may be null or hold any JSON.
  const path = call.arguments?.path;
  if (typeof path !== "string") {
    return 'Error: read_file needs a "path" string.';
  }
  try {
    const other = await ctx.tools.call("read_file", {
      path,
      max_bytes: RELATED_BYTES,
      line_numbers: true,
    }) as ReadPage;
    reads.files.push(other.path ?? path);
    return other.content;
  } catch (error) {
    return `Error: ${messageOf(error)}`;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(text: string): string {
  const line = text.trim().split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
