// Package opentool reads and writes OpenTool documents, and converts their
// functions to and from the device's tool declarations (package tools).
//
// # Documents
//
// An OpenTool document (specification 1.0.0, and 1.1.0's "server") lists
// functions a model may call: each with a name, a description, parameters
// (a name, a description, a schema, and whether it is required) and an
// optional return value. Schemas are a small subset of JSON Schema (type,
// description, properties, items, enum, required) plus references to the
// document's shared schemas, written {"$ref":"#/schemas/<name>"} as the
// public SDKs do.
//
// Document and the types under it mirror the JSON exactly, and marshal to
// what SDK readers expect: a parameter's "required" is always written,
// "functions" and "parameters" are [] rather than null or absent.
//
// Parse decodes and checks a document and reports every problem with its
// JSON path:
//
//	functions[2].parameters[0].schema.items.type: "strin" is not one of boolean, integer, number, string, array, object
//	functions[0].name: missing (required)
//	schemas.Point.properties.x: $ref "#/schemas/Nope" names no schema
//
// Validate runs the same checks on a Document built in Go. The rules, and
// where Parse is more lenient than the specification (a parameter without
// "required" is optional), are given on Parse, Validate and Schema.
//
// # Declarations
//
// A device declares its tools to the agent server as tools.Declaration
// values, whose parameters are one JSON Schema object. Document.Declaration
// turns an OpenTool function into one: a property per parameter, "required"
// from the parameters' flags, and the shared schemas the function reaches
// as "$defs" (recursive ones included). FunctionFromDeclaration goes the
// other way, and NewDocument describes a whole set of tools, merging their
// "$defs" into the document's schemas; the device serves that document.
//
// The two are inverse for everything a declaration can carry: a function
// converted to a declaration and back is the same function. The return
// value is the exception: registerTools has no place for it, so it is
// lost. JSON Schema keywords OpenTool lacks are the other way's loss; see
// FunctionFromDeclaration for what becomes of them.
//
// # Descriptions
//
// A parameter has a description and so does its schema, but the property
// made from them has one "description". The rule that keeps both:
//
//   - the parameter's description becomes "description";
//   - when the schema has one too, it goes in the extension keyword
//     "x-opentool-schema-description" (SchemaDescriptionKeyword), which
//     JSON Schema validators ignore;
//   - when only the schema has one, it becomes "description", so that a
//     model still reads it, and the extension keyword is true to say whose
//     it is.
//
// A declaration written by hand (or by tools.Func) has only "description":
// it is the parameter's, and its schema has none.
package opentool
