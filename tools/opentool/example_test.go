package opentool_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/devicectl/devicectl/tools"
	"github.com/devicectl/devicectl/tools/opentool"
)

// Parse a document and declare one of its functions to the agent server.
func Example_declaration() {
	doc, err := opentool.Parse([]byte(`{
	  "opentool": "1.0.0",
	  "info": {"title": "Lamp", "version": "1.0"},
	  "functions": [{
	    "name": "set_lamp",
	    "description": "Switch the lamp and set its colour.",
	    "parameters": [
	      {"name": "on", "description": "true to switch on.", "schema": {"type": "boolean"}, "required": true},
	      {"name": "colour", "schema": {"$ref": "#/schemas/Colour"}, "required": false}
	    ]
	  }],
	  "schemas": {
	    "Colour": {"type": "string", "enum": ["warm", "cold"]}
	  }
	}`))
	if err != nil {
		log.Fatal(err)
	}
	decl, err := doc.Declaration(doc.Function("set_lamp"), tools.Control)
	if err != nil {
		log.Fatal(err)
	}
	out, err := json.MarshalIndent(decl, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output:
	// {
	//   "name": "set_lamp",
	//   "description": "Switch the lamp and set its colour.",
	//   "main_type": "remote",
	//   "sub_type": "control",
	//   "parameters": {
	//     "type": "object",
	//     "properties": {
	//       "on": {
	//         "type": "boolean",
	//         "description": "true to switch on."
	//       },
	//       "colour": {
	//         "$ref": "#/$defs/Colour"
	//       }
	//     },
	//     "$defs": {
	//       "Colour": {
	//         "type": "string",
	//         "enum": [
	//           "warm",
	//           "cold"
	//         ]
	//       }
	//     },
	//     "required": [
	//       "on"
	//     ]
	//   }
	// }
}

// Parse reports every problem of a document with its JSON path.
func ExampleParse_errors() {
	_, err := opentool.Parse([]byte(`{
	  "opentool": "1.0.0",
	  "info": {"title": "Lamp"},
	  "functions": [{
	    "name": "set lamp",
	    "description": "Switch the lamp.",
	    "parameters": [{"name": "level", "schema": {"type": "int"}, "required": "yes"}]
	  }]
	}`))
	fmt.Println(err)
	// Output:
	// info.version: missing (required)
	// functions[0].parameters[0].required: want a boolean, got a string
	// functions[0].name: "set lamp" does not match ^[a-zA-Z0-9_-]{1,64}$
	// functions[0].parameters[0].schema.type: "int" is not one of boolean, integer, number, string, array, object
}
