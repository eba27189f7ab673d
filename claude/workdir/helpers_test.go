package workdir_test

import "encoding/json"

// jsonNames decodes the names of a request's tool declarations.
func jsonNames(tools json.RawMessage, names *[]string) error {
	var list []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(tools, &list); err != nil {
		return err
	}
	for _, t := range list {
		*names = append(*names, t.Name)
	}
	return nil
}
