package sqlmigrate

import (
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []int
		wantErr bool
	}{
		{"ordered", fstest.MapFS{
			"m/0002_more.sql": {Data: []byte("CREATE INDEX {{prefix}}i ON {{prefix}}t(a);")},
			"m/0001_init.sql": {Data: []byte("CREATE TABLE {{prefix}}t(a);")},
			"m/README.md":     {Data: []byte("ignored")},
		}, []int{1, 2}, false},
		{"gap", fstest.MapFS{"m/0001_a.sql": {}, "m/0003_c.sql": {}}, nil, true},
		{"duplicate", fstest.MapFS{"m/0001_a.sql": {}, "m/0001_b.sql": {}}, nil, true},
		{"bad name", fstest.MapFS{"m/init.sql": {}}, nil, true},
		{"empty", fstest.MapFS{"m/x.txt": {}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.files, "m", "c", "p_")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d migrations, want %d", len(got), len(tt.want))
			}
			for i, v := range tt.want {
				if got[i].Version != v || got[i].Component != "c" {
					t.Fatalf("migration %d = %+v", i, got[i])
				}
			}
			if tt.name == "ordered" && got[0].SQL != "CREATE TABLE p_t(a);" {
				t.Fatalf("placeholder not replaced: %q", got[0].SQL)
			}
		})
	}
}
