package gen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

type field struct {
	goName, json, typ, tag, doc string
	required                    bool
}

type variant struct {
	name, value string
}

// union is a oneOf of objects told apart by a const member (the records, by "kind").
type union struct {
	name, disc, doc string
	variants        []variant
	common          []field // required members every variant has, with one Go type: Get<Name>()
}

type decl struct {
	name, doc, kind string // kind: struct, enum, alias, union
	fields          []field
	open            bool   // additionalProperties: unknown members kept in Extra
	union           *union // struct: the union it is a variant of
	discValue       string
	values          []string // enum
	constPrefix     string
	target          string // alias
	u               *union // union
}

type generator struct {
	defs          map[string]*schema
	defGo         map[string]string // $defs name → Go name
	decls         map[string]*decl
	kinds         map[string]string // Go type name → decl kind
	canonToName   map[string]string // inline object canon → Go name
	enumToName    map[string]string // enum values → Go name
	unions        map[string]*union // $defs name of a union → union
	variantOf     map[string]*union // $defs name of a variant → its union
	variantValue  map[string]string
	errorKindsKey string
}

func newGenerator(root *node, domainKinds []string) (*generator, error) {
	defsNode := root.get("$defs")
	if defsNode == nil {
		return nil, fmt.Errorf("schema.json has no $defs")
	}
	g := &generator{
		defs: map[string]*schema{}, defGo: map[string]string{}, decls: map[string]*decl{},
		kinds: map[string]string{}, canonToName: map[string]string{}, enumToName: map[string]string{},
		unions: map[string]*union{}, variantOf: map[string]*union{}, variantValue: map[string]string{},
	}
	for _, k := range defsNode.keys {
		s, err := toSchema(defsNode.obj[k])
		if err != nil {
			return nil, fmt.Errorf("$defs/%s: %w", k, err)
		}
		g.defs[k] = s
		g.defGo[k] = goIdent(k)
	}
	// The domain error kinds are the ErrorKind type (declared from meta.json).
	g.errorKindsKey = strings.Join(domainKinds, "|")
	g.enumToName[g.errorKindsKey] = "ErrorKind"
	// Enum definitions name their values first, object definitions their shapes.
	for _, k := range sortedKeys(g.defs) {
		s := g.defs[k]
		if len(s.enum) > 0 {
			g.enumToName[strings.Join(s.enum, "|")] = g.defGo[k]
		}
		if s.typ == "object" && len(s.props) > 0 {
			g.canonToName[s.n.canon()] = g.defGo[k]
		}
	}
	for _, k := range sortedKeys(g.defs) {
		if len(g.defs[k].oneOf) > 0 {
			if err := g.prepareUnion(k); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (g *generator) resolve(s *schema) *schema {
	for s != nil && s.ref != "" {
		s = g.defs[s.ref]
	}
	return s
}

// prepareUnion finds the discriminator of a oneOf and names its variants.
func (g *generator) prepareUnion(defName string) error {
	s := g.defs[defName]
	u := &union{name: g.defGo[defName], doc: s.desc}
	var objs []*schema
	for _, v := range s.oneOf {
		objs = append(objs, g.resolve(v))
	}
	for _, p := range objs[0].props {
		all := true
		for _, o := range objs {
			ps, ok := o.prop[p]
			if !ok || !ps.hasConst || !o.required[p] {
				all = false
				break
			}
			if _, isStr := ps.constVal.(string); !isStr {
				all = false
				break
			}
		}
		if all {
			u.disc = p
			break
		}
	}
	if u.disc == "" {
		return fmt.Errorf("$defs/%s: a oneOf without a const member in every variant", defName)
	}
	for i, v := range s.oneOf {
		value := objs[i].prop[u.disc].constVal.(string)
		name := ""
		if v.ref != "" {
			name = g.defGo[v.ref]
			g.variantOf[v.ref] = u
			g.variantValue[v.ref] = value
		} else {
			name = strings.TrimSuffix(u.name, "Record") + goIdent(value) + "Record"
		}
		u.variants = append(u.variants, variant{name: name, value: value})
	}
	g.unions[defName] = u
	return nil
}

// typeOf is the Go type of a schema; suggest names an inline object or enum it declares.
func (g *generator) typeOf(s *schema, suggest string) (string, error) {
	switch {
	case s.ref != "":
		d, ok := g.defs[s.ref]
		if !ok {
			return "", fmt.Errorf("unknown $ref %q", s.ref)
		}
		if _, ok := g.unions[s.ref]; ok {
			// A single union member stays raw (an interface cannot be decoded into): Decode<Union> reads it.
			return "json.RawMessage", nil
		}
		if len(d.enum) > 0 || (d.typ == "object" && len(d.props) > 0) || len(d.oneOf) > 0 || g.isAlias(d) {
			return g.defGo[s.ref], nil
		}
		return g.typeOf(d, g.defGo[s.ref])
	case len(s.anyOf) > 0:
		var rest []*schema
		for _, a := range s.anyOf {
			if a.typ != "null" {
				rest = append(rest, a)
			}
		}
		nullable := len(rest) < len(s.anyOf)
		t := "json.RawMessage"
		switch {
		case len(rest) == 2 && rest[0].typ == "string" && len(rest[0].enum) == 0 && rest[1].ref == "BlobRef":
			t = "StringOrBlob"
		case len(rest) == 1:
			var err error
			if t, err = g.typeOf(rest[0], suggest); err != nil {
				return "", err
			}
		}
		if nullable {
			return pointerTo(t), nil
		}
		return t, nil
	case len(s.oneOf) > 0:
		return "json.RawMessage", nil
	case len(s.enum) > 0:
		return g.enumType(s, suggest), nil
	case s.hasConst:
		switch v := s.constVal.(type) {
		case string:
			return "string", nil
		case bool:
			return "bool", nil
		case json.Number:
			if _, err := v.Int64(); err == nil {
				return "int64", nil
			}
			return "float64", nil
		}
		return "json.RawMessage", nil
	case s.isEmptyAny:
		return "json.RawMessage", nil
	}
	switch s.typ {
	case "string":
		return "string", nil
	case "integer":
		return "int64", nil
	case "number":
		return "float64", nil
	case "boolean":
		return "bool", nil
	case "array":
		if s.items == nil {
			return "[]json.RawMessage", nil
		}
		if s.items.ref != "" {
			if u, ok := g.unions[s.items.ref]; ok {
				return u.name + "s", nil
			}
		}
		it, err := g.typeOf(s.items, singular(suggest))
		if err != nil {
			return "", err
		}
		return "[]" + it, nil
	case "object", "":
		if len(s.props) == 0 {
			if s.addl != nil && !s.addl.isEmptyAny {
				t, err := g.typeOf(s.addl, suggest+"Value")
				if err != nil {
					return "", err
				}
				return "map[string]" + t, nil
			}
			return "map[string]json.RawMessage", nil
		}
		return g.inlineStruct(s, suggest)
	}
	return "json.RawMessage", nil
}

func (g *generator) isAlias(s *schema) bool {
	return len(s.enum) == 0 && !s.hasConst && (s.typ == "string" || s.typ == "integer" || s.typ == "number" || s.typ == "boolean")
}

func pointerTo(t string) string {
	if strings.HasPrefix(t, "*") || strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "map[") || t == "json.RawMessage" {
		return t
	}
	return "*" + t
}

func (g *generator) enumType(s *schema, suggest string) string {
	key := strings.Join(s.enum, "|")
	if name, ok := g.enumToName[key]; ok {
		if name != "ErrorKind" && g.decls[name] == nil {
			g.addDecl(&decl{name: name, kind: "enum", values: s.enum, constPrefix: name, doc: s.desc})
		}
		return name
	}
	name := enumNames[key]
	if name == "" {
		name = suggest
	}
	name = g.unique(name)
	g.enumToName[key] = name
	g.addDecl(&decl{name: name, kind: "enum", values: s.enum, constPrefix: name, doc: s.desc})
	return name
}

func (g *generator) unique(name string) string {
	if _, taken := g.kinds[name]; !taken {
		if _, isDef := g.defGoNames()[name]; !isDef {
			return name
		}
	}
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s%d", name, i)
		if _, taken := g.kinds[n]; !taken {
			return n
		}
	}
}

func (g *generator) defGoNames() map[string]bool {
	m := map[string]bool{}
	for _, v := range g.defGo {
		m[v] = true
	}
	return m
}

func (g *generator) addDecl(d *decl) {
	g.decls[d.name] = d
	g.kinds[d.name] = d.kind
}

func (g *generator) inlineStruct(s *schema, suggest string) (string, error) {
	c := s.n.canon()
	if name, ok := g.canonToName[c]; ok {
		return name, nil
	}
	name := suggest
	if better, ok := inlineNames[suggest]; ok {
		name = better
	}
	name = g.unique(name)
	g.canonToName[c] = name
	g.kinds[name] = "struct" // reserved before its members are typed (recursion)
	d, err := g.structDecl(name, s, nil, "")
	if err != nil {
		return "", err
	}
	g.addDecl(d)
	return name, nil
}

func (g *generator) structDecl(name string, s *schema, u *union, discValue string) (*decl, error) {
	d := &decl{name: name, kind: "struct", doc: s.desc, union: u, discValue: discValue}
	for _, p := range s.props {
		if u != nil && p == u.disc {
			continue
		}
		ps := s.prop[p]
		goName := goIdent(p)
		t, err := g.typeOf(ps, name+goName)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", name, p, err)
		}
		f := field{goName: goName, json: p, doc: ps.desc, required: s.required[p]}
		switch {
		case ps.hasConst && ps.constVal == true && !f.required:
			t, f.tag = "bool", p+",omitempty"
		case f.required:
			f.tag = p
		case strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "map[") || strings.HasSuffix(t, "Records"):
			f.tag = p + ",omitzero"
		case t == "json.RawMessage" || strings.HasPrefix(t, "*"):
			f.tag = p + ",omitempty"
		default:
			t, f.tag = "*"+t, p+",omitempty"
		}
		f.typ = t
		d.fields = append(d.fields, f)
	}
	// An open object keeps the members it does not name in Extra; an open union variant (error
	// data) keeps the whole object it was decoded from in Raw() instead.
	if s.addl != nil && len(s.props) > 0 && u == nil {
		d.open = true
	}
	return d, nil
}

// build declares every $defs entry (and the inline types they need).
func (g *generator) build() error {
	for _, k := range sortedKeys(g.defs) {
		s := g.defs[k]
		name := g.defGo[k]
		switch {
		case len(s.oneOf) > 0:
			u := g.unions[k]
			g.addDecl(&decl{name: name, kind: "union", u: u, doc: s.desc})
			for i, v := range s.oneOf {
				if v.ref != "" {
					continue // declared as its own definition
				}
				d, err := g.structDecl(u.variants[i].name, v, u, u.variants[i].value)
				if err != nil {
					return err
				}
				g.addDecl(d)
			}
		case len(s.enum) > 0:
			g.enumType(s, name)
		case s.typ == "object" && len(s.props) > 0:
			g.kinds[name] = "struct"
			d, err := g.structDecl(name, s, g.variantOf[k], g.variantValue[k])
			if err != nil {
				return err
			}
			g.addDecl(d)
		case g.isAlias(s):
			t, _ := g.typeOf(&schema{typ: s.typ, n: s.n}, name)
			g.addDecl(&decl{name: name, kind: "alias", target: t, doc: s.desc})
		default:
			t, err := g.typeOf(s, name)
			if err != nil {
				return err
			}
			g.addDecl(&decl{name: name, kind: "alias", target: t, doc: s.desc})
		}
	}
	// Members common to every variant of a union become its getters.
	for _, k := range sortedKeys(g.unions) {
		u := g.unions[k]
		var first *decl
		for _, v := range u.variants {
			d := g.decls[v.name]
			if first == nil {
				first = d
				continue
			}
			_ = d
		}
		for _, f := range first.fields {
			if !f.required {
				continue
			}
			common := true
			for _, v := range u.variants[1:] {
				found := false
				for _, f2 := range g.decls[v.name].fields {
					if f2.json == f.json && f2.typ == f.typ && f2.required {
						found = true
					}
				}
				common = common && found
			}
			if common {
				u.common = append(u.common, f)
			}
		}
	}
	return nil
}
